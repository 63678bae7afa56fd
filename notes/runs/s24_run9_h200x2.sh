#!/usr/bin/env bash
# Session 24, two GPUs (nvidia-h200-x2, lent this session): the multi-GPU tests (products on cuda:1 with cuda:0
# current, relaunched; DDP), first run since session 11, then the planner, fast-launch and ops tests with two GPUs
# visible.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 -m multigpu tests 2>&1 | tee $OUT/multigpu.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/multigpu.log | head -20
timeout 300 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py tests/test_fast_launch.py \
  tests/test_device.py 2>&1 | tee $OUT/two_visible.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/two_visible.log | head -20
