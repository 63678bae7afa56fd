#!/usr/bin/env bash
# Session 10, device run 8 (and 9 with DT=fp16): one sweep with PREFETCH beside split-K configs only (fresh
# cache, 3 rounds), alone: runs 6 and 7 ran past 300-330 s tuning the unaligned pointer products.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT; DT=${DT:-bf16}
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r8-$DT timeout 560 python3 -m bench --preset sweep --dtype $DT --rounds 3 \
  --out $OUT/sweep_$DT 2>$OUT/sweep_$DT.err > $OUT/sweep_$DT.log; echo "$DT exit $?"
grep -E "^$DT " $OUT/sweep_$DT.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_$DT.log
grep -E "^$DT +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 |4096x4096x4096|8192x8192|prefetch" $OUT/sweep_$DT.log | cut -c1-200
tr '\r' '\n' < $OUT/sweep_$DT.err | grep -o "[0-9]*/46 \[[0-9:]*" | tail -9 | tr '\n' ' '
