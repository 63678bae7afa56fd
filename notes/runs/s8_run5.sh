#!/usr/bin/env bash
# Session 8, device run 5: the bf16 and fp16 sweeps at the session's code (narrow 16-bit tiles
# offered to products of few tiles), fresh tuning cache each, 3 interleaved rounds.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
for DT in bf16 fp16; do
  TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r5-$DT timeout 285 python3 -m bench --preset sweep --dtype $DT --rounds 3 \
    --out $OUT/sweep_$DT 2>$OUT/sweep_$DT.err > $OUT/sweep_$DT.log; echo "$DT exit $?"
done
for DT in bf16 fp16; do grep -E "^$DT " $OUT/sweep_$DT.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_$DT.log; done
