#!/usr/bin/env bash
# Session 6, run 5: GPU suite at the final code (eeea430's, stream-K reverted), and the fp16 sweep with
# graph-timed tuning (fresh cache; session 5 ran only the bf16 one).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r5
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== pytest -n 8"
timeout 235 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
echo "== sweep fp16"
timeout 320 python3 -m bench --preset sweep --dtype fp16 --out $OUT/sweep_fp16 2>$OUT/sweep.err | tee $OUT/sweep.log | tail -52 | cut -c1-200
tail -2 $OUT/sweep.err | cut -c1-300
