#!/usr/bin/env bash
# Session 8, device run 1: experiments only (no library change). Issue 9: where the w2048 swapped
# step and the compiled block at M = 128 lose (profiler); issue 10: the thin products below 0.9x.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
echo "== model_profile"
timeout 240 python3 notes/experiments/model_profile.py > $OUT/model_profile.log 2>&1; echo "exit $?"
echo "== thin_products"
timeout 300 python3 notes/experiments/thin_products.py > $OUT/thin_products.log 2>&1; echo "exit $?"
grep -E "^===|^linear" $OUT/model_profile.log
tail -45 $OUT/thin_products.log
