#!/usr/bin/env bash
# Session 13, device run 6: the two hint forms of the pointer kernel, each at its best of six configs, on unaligned
# products (notes/experiments/hint_form.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r6 timeout 400 python3 notes/experiments/hint_form.py notes/experiments/gemm_hints_s12.py \
  > $OUT/hint_form.log 2>&1; echo "hint_form exit $?"; tail -12 $OUT/hint_form.log | cut -c1-220
