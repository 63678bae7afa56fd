#!/usr/bin/env bash
# Session 5, run 10: GPU suite at the final code (graph-timed tuning captured by timing.py, the review fixes),
# a tuned tf32x3 and bf16 check.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-run10
echo "== pytest -n 8"
timeout 240 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
echo "== tables"
timeout 80 python3 -m bench --dtype tf32x3 --shape 4096x4096x4096 --shape 8192x8192x8192 --rounds 1 2>/dev/null | grep -E "tritonmm|torch.mm "
timeout 80 python3 -m bench --dtype bf16 --shape 1024x1024x1024 --shape 4096x4096x4096 --impl tritonmm --impl torch.mm --rounds 1 2>/dev/null | grep -E "autotuned|torch.mm "
