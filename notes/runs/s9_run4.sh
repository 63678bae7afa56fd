#!/usr/bin/env bash
# Session 9, device run 4: the bf16 sweep at the session's code (fresh cache, 3 rounds; decode rows of
# one row now on the one-row kernel), and where a staged product's time goes (staged_breakdown.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r4-bf16 timeout 300 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r4-sb timeout 150 python3 notes/experiments/staged_breakdown.py \
  > $OUT/staged_breakdown.log 2>&1; echo "staged_breakdown exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x" $OUT/sweep_bf16.log | cut -c1-200
sed -n '/^shape/,$p' $OUT/staged_breakdown.log; tail -3 $OUT/staged_breakdown.log | grep -i error
