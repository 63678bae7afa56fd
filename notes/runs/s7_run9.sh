#!/usr/bin/env bash
# Session 7, device run 9: after the review's refactor of the TMA launch's arguments and grid (one
# helper for the whole product and the wave-tail rows), the planner, op and library tests on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r9
timeout 400 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py tests/test_ops.py \
  tests/test_library.py tests/test_fast_launch.py tests/test_precision.py tests/test_properties.py 2>&1 | tee $OUT/pytest.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
