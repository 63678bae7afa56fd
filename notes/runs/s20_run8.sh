#!/usr/bin/env bash
# Session 20, device run 8 (after the review): planner and precision tests, memcheck over the merged split-K block.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s20r8 timeout 240 python3 -m pytest -q -n 8 tests/test_plan.py tests/test_precision.py \
  tests/test_config_space.py > $OUT/tests.log 2>&1; echo "tests exit $?"
tail -2 $OUT/tests.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/tests.log | head -5 | cut -c1-300
TRITONMM_CACHE_DIR=/tmp/tc-s20r8s timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
