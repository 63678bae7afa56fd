#!/usr/bin/env bash
# Session 9, two GPUs (nvidia-h200-x2): the tests that use a second GPU, at the final code (the one-row kernel on either GPU;
# M = 1 keyed apart in tuning).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 420 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 tests/test_device.py tests/test_nn.py \
  tests/test_override.py tests/test_fast_launch.py tests/test_library.py tests/test_plan.py \
  tests/test_cuda_reference.py tests/test_precision.py 2>&1 | tee $OUT/pytest2.log | tail -4
grep -E "^(FAILED|ERROR)" $OUT/pytest2.log | head -20
