#!/usr/bin/env bash
# Session 12, device run 11 (final code, 76aa836): the draw of run 1 again (bf16, seed 1).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r11-draw timeout 540 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 40 --seed 1 \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/draw_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 40" $OUT/draw_bf16.log
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-200
