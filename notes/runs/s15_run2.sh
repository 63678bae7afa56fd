#!/usr/bin/env bash
# Session 15, device run 2: the pointer kernel's staging rule, A/B in the library (notes/experiments/pointer_staging_ab.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s15r2 timeout 540 python3 notes/experiments/pointer_staging_ab.py > $OUT/pointer_staging_ab.log 2>&1
echo "pointer_staging_ab exit $?"; tail -20 $OUT/pointer_staging_ab.log | cut -c1-200
