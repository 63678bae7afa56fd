#!/usr/bin/env bash
# Session 9, device run 10: after the review's planner mends (the one-row kernel offered by the caller's
# B; one epilogue-constants helper; one gradient check): the planner, ops, precision, library and
# fast-launch tests on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r10
timeout 300 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py tests/test_ops.py \
  tests/test_precision.py tests/test_library.py tests/test_fast_launch.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
