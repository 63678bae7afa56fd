#!/usr/bin/env bash
# Session 11, two GPUs (nvidia-h200-x2): the multi-GPU tests at the final code (a relaunch on cuda:1 with
# cuda:0 current now switches devices from the cache entry's device index, plan._relaunch).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 -m multigpu -k "not cuda_reference" tests/test_device.py tests/test_nn.py 2>&1 | tee $OUT/pytest2.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/pytest2.log | head -20
