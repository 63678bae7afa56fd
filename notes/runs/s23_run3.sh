#!/usr/bin/env bash
# Session 23, device run 3 (the last tiles moved back inside C): the GPU suite and memcheck over the Triton kernels.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r3 timeout 330 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
tail -4 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
TRITONMM_CACHE_DIR=/tmp/tc-s23r3s timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
