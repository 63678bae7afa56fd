#!/usr/bin/env bash
# Session 11, device run 6: the fp16 sweep (fresh cache, 3 rounds) with the 6-stage 64x128 / 128x64 tiles,
# the direct launches and the one-launch operand copies.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r6-fp16 timeout 500 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "fp16 exit $?"
grep -E "^fp16 " $OUT/sweep_fp16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_fp16.log
grep -E "^fp16 +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 |768x768|1024x1024x1024|1280|1536x1536|4096x4096x4096|8192x8192" $OUT/sweep_fp16.log | cut -c1-200
