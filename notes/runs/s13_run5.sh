#!/usr/bin/env bash
# Session 13, device run 5: run 4's hint A/B again (its baseline file failed to import there), then 40 shapes drawn
# with a new seed (2) in bf16: a held-out check of the planner's rules.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r5 timeout 150 python3 notes/experiments/hint_ab.py notes/experiments/gemm_hints_s12.py \
  > $OUT/hint_ab.log 2>&1; echo "hint_ab exit $?"; tail -14 $OUT/hint_ab.log | cut -c1-220
TRITONMM_CACHE_DIR=/tmp/tc-s13r5-draw timeout 420 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 40 --seed 2 \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "bf16 exit $?"
grep -E "over 40" $OUT/draw_bf16.log; grep -E "^bf16 " $OUT/draw_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200
