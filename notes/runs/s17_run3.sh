#!/usr/bin/env bash
# Session 17, device run 3: the bf16 and fp16 sweeps at this session's code (fresh cache each, 3 rounds).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
for dt in bf16 fp16; do
  TRITONMM_CACHE_DIR=/tmp/tc-s17r3-$dt timeout 290 python3 -m bench --preset sweep --dtype $dt --rounds 3 \
    --out $OUT/sweep_$dt 2>$OUT/sweep_$dt.err > $OUT/sweep_$dt.log; echo "$dt exit $?"
done
for dt in bf16 fp16; do
  grep -E "^$dt " $OUT/sweep_$dt.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 4|geomean" $OUT/sweep_$dt.log | cut -c1-250
  grep -E "^$dt +.*(x1531|x1027|x2051|x2999|x2049) " $OUT/sweep_$dt.log | cut -c1-200
done
