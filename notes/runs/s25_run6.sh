#!/usr/bin/env bash
# Session 25, device run 6: session 23's held-out draw (seed 10, 24 shapes, bf16) again, with PDL on.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r6-draw timeout 560 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 24 \
  --seed 10 --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
tail -2 $OUT/draw_bf16.err | cut -c1-300
grep -E "over 24" $OUT/draw_bf16.log | cut -c1-250
