#!/usr/bin/env bash
# Session 11, device run 11: after the review's mends (copy_kernel's tile counts in int64, the heuristic's
# TMA-only rule, the tensor-map bound test): planner, fast-launch, config-space, ops and precision tests.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r11-t timeout 280 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_fast_launch.py tests/test_config_space.py tests/test_ops.py tests/test_precision.py \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
