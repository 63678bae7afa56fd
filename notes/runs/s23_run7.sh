#!/usr/bin/env bash
# Session 23, device run 7: the fp16 sweep with the last tiles moved back inside C.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r7-fp16 timeout 520 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_fp16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_fp16.log | cut -c1-250
awk '$1 == "fp16" && $6 < 0.9' $OUT/sweep_fp16.log | cut -c1-220
grep -E "x10[0-9][0-9]x|x20[0-9][0-9]x|x30[0-9][0-9]x|x40[0-9][0-9]x|4099" $OUT/sweep_fp16.log | cut -c1-220
