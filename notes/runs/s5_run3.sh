#!/usr/bin/env bash
# Session 5, device run 3 (the sixth call; calls 3-5 ran the tf32x3 experiments alone): GPU suite at the
# final kernels; tensor maps encoded once (host time, interleaved A/B); the host suite; tf32x3 and fp8
# tables (3 rounds); the quick run (ladder charts with the wgmma rung).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== pytest -n 8"
timeout 240 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -4
echo "== encode once"
timeout 60 python3 notes/experiments/encode_once.py 2>&1 | tail -6
echo "== host suite"
timeout 90 python3 -m bench.suites host --rounds 3 2>&1 | tail -8
echo "== tf32x3"
timeout 100 python3 -m bench --dtype tf32x3 --shape 4096x4096x4096 --shape 8192x8192x8192 --rounds 3 2>/dev/null | tail -8
echo "== quick"
timeout 150 python3 -m bench --quick --out $OUT/results 2>$OUT/quick.err | tail -40 > $OUT/quick.log; grep -E "wgmma|cp_async 128x256x64|torch.mm  " $OUT/quick.log | head; tail -2 $OUT/quick.err
