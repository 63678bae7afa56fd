#!/usr/bin/env bash
# Session 11, device run 5: the bf16 sweep (fresh cache, 3 rounds) with the 6-stage 64x128 / 128x64 tiles,
# the direct launches and the one-launch operand copies.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r5-bf16 timeout 500 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 |768x768|1024x1024x1024|1280|1536x1536|4096x4096x4096|8192x8192" $OUT/sweep_bf16.log | cut -c1-200
