#!/usr/bin/env bash
# Session 23, device run 12: after the review (TMA_SHIFT in launch_key), the planner and launch-cache tests on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r12 timeout 300 python3 -m pytest -q -n 8 tests/test_plan.py tests/test_fast_launch.py \
  tests/test_ops.py > $OUT/tests.log 2>&1; echo "tests exit $?"
tail -2 $OUT/tests.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/tests.log | head -10 | cut -c1-300
