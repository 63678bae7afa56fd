#!/usr/bin/env bash
# Session 12, device run 6 (0ad77a0): the bf16 sweep; run 10, the same script at the final code.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r6-bf16 timeout 540 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x|x1027|x1531|x2051|x2999|x2049 |768x768|1024x1024x1024|1536x1536|3072x|4096x4096x4096|8192x8192" $OUT/sweep_bf16.log | cut -c1-200
