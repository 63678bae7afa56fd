#!/usr/bin/env bash
# Session 25, device run 10: PDL launches under compute-sanitizer (notes/experiments/pdl_sanitizer.py), off then on.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
for pdl in off on; do
  TRITONMM_CACHE_DIR=/tmp/tc-s25r10 timeout 100 compute-sanitizer --tool memcheck python3 notes/experiments/pdl_sanitizer.py \
    $pdl > $OUT/pdl_sanitizer_$pdl.log 2>&1; echo "PDL $pdl exit $?"; tail -8 $OUT/pdl_sanitizer_$pdl.log | cut -c1-200
done
