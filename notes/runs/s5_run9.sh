#!/usr/bin/env bash
# Session 5, run 9: GPU suite and the bf16 sweep with tuning timed in CUDA-graph replay (host descriptors again).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-run9
echo "== pytest -n 8"
timeout 230 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
echo "== sweep bf16"
timeout 330 python3 -m bench --preset sweep --dtype bf16 --out $OUT/sweep_bf16 2>$OUT/sweep.err | tee $OUT/sweep.log | tail -52 | cut -c1-200
tail -2 $OUT/sweep.err | cut -c1-300
