#!/usr/bin/env bash
# Refused at the call: the two-GPU kind was not lent then (listed by status at the session start); not run.
# Session 21, two GPUs (nvidia-h200-x2): the multi-GPU tests at the final code (first run since session 11; a new one
# for staged and TMA split-K products on cuda:1), then the planner, fast-launch and library tests with two GPUs visible.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 -m multigpu tests/test_device.py tests/test_nn.py \
  tests/test_cuda_reference.py 2>&1 | tee $OUT/multigpu.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/multigpu.log | head -20
