#!/usr/bin/env bash
# Session 13, device run 1: stream-K (kernels/stream_k.py) tests on the GPU, then notes/experiments/stream_k.py.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r1-t timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_config_space.py tests/test_validation.py > $OUT/pytest.log 2>&1; echo "pytest exit $?"
tail -1 $OUT/pytest.log; grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s13r1 timeout 360 python3 notes/experiments/stream_k.py > $OUT/stream_k.log 2>&1
echo "experiment exit $?"; grep -B2 -A30 "== summary" $OUT/stream_k.log || tail -30 $OUT/stream_k.log
