#!/usr/bin/env bash
# Session 25, device run 9: the PDL tests after run 4's fix (the stand-in Hopper on every device), then memcheck over
# the Triton kernels, launched with PDL.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r9 timeout 200 python3 -m pytest -q -n 8 tests/test_plan.py -k "pdl or predecessor" \
  > $OUT/pdl_tests.log 2>&1; echo "tests exit $?"; tail -2 $OUT/pdl_tests.log | cut -c1-300
TRITONMM_CACHE_DIR=/tmp/tc-s25r9s timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
tail -3 $OUT/san-triton.log | cut -c1-300
