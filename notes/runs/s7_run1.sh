#!/usr/bin/env bash
# Session 7, device run 1: experiments only (no library change). The config landscape and a
# wave-tail split on the sweep's slow TMA shapes; split-K's eager cost on decode products.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
echo "== decode host"
timeout 150 python3 notes/experiments/decode_host.py > $OUT/decode_host.log 2>&1; echo "exit $?"
echo "== landscape"
timeout 420 python3 notes/experiments/landscape.py > $OUT/landscape.log 2>&1; echo "exit $?"
tail -5 $OUT/landscape.log
grep -A12 "eager us/call" $OUT/decode_host.log | head -40
