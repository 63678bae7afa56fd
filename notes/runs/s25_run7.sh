#!/usr/bin/env bash
# Session 25, device run 7: the fp16 sweep with PDL on.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r7-fp16 timeout 570 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_fp16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_fp16.log | cut -c1-250
