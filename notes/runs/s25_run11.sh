#!/usr/bin/env bash
# Session 25, device run 11: memcheck over the Triton kernels (PDL on), with run 9's 300 s limit raised (run 10 showed
# PDL launches running under compute-sanitizer on every path).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r9s timeout 570 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
