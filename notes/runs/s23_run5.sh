#!/usr/bin/env bash
# Session 23, device run 5: seed 9's 24 drawn shapes again (session 22, run 6), with the last tiles moved back inside C.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r5-draw timeout 540 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 24 --seed 9 \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
tail -3 $OUT/draw_bf16.err | cut -c1-300
grep -E "over 24" $OUT/draw_bf16.log | cut -c1-250
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-220
