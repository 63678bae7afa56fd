#!/usr/bin/env bash
# Session 7, device run 4: after run 3, tuning keys in half-octave buckets (3072^3 no longer shares
# 4096^3's config) and eager calls stage unaligned operands only from 2**34 multiply-adds; the bf16
# and fp16 sweeps, fresh tuning cache each, 3 interleaved rounds.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
for DT in bf16 fp16; do
  TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r4-$DT timeout 285 python3 -m bench --preset sweep --dtype $DT --rounds 3 \
    --out $OUT/sweep_$DT 2>$OUT/sweep_$DT.err > $OUT/sweep_$DT.log; echo "$DT exit $?"
done
for DT in bf16 fp16; do grep -E "^$DT " $OUT/sweep_$DT.log | awk '$6 < 0.9 || $9 < 0.7 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_$DT.log; done
