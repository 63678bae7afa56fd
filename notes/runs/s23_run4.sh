#!/usr/bin/env bash
# Session 23, device run 4: the bf16 sweep with the last tiles moved back inside C.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r4-bf16 timeout 500 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_bf16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_bf16.log | cut -c1-250
grep -E "x10[0-9][0-9]x|x20[0-9][0-9]x|x30[0-9][0-9]x|x40[0-9][0-9]x|4099" $OUT/sweep_bf16.log | cut -c1-220
