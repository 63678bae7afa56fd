#!/usr/bin/env bash
# Session 20, device run 7 (final code): the fixed fp16 sweep (bench/results/sweep_fp16 was session 17's).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s20r7-fp16 timeout 580 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_fp16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_fp16.log | cut -c1-250
