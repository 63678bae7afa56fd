#!/usr/bin/env bash
# Session 7, device run 3: the bf16 sweep, fresh tuning cache, 3 interleaved rounds.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r3
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
DT=${DT:-bf16}
timeout 570 python3 -m bench --preset sweep --dtype $DT --rounds 3 --out $OUT/sweep_$DT 2>$OUT/sweep.err | tee $OUT/sweep.log | tail -52 | cut -c1-200
tail -2 $OUT/sweep.err | cut -c1-300
