#!/usr/bin/env bash
# Session 23, device run 8: a held-out check on 24 shapes drawn with a new seed (10), bf16.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r8-draw timeout 560 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 24 \
  --seed 10 --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
tail -3 $OUT/draw_bf16.err | cut -c1-300
grep -E "over 24" $OUT/draw_bf16.log | cut -c1-250
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-220
