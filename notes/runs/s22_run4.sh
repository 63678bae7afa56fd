#!/usr/bin/env bash
# Session 22, device run 4: pinned deeper / more-sliced narrow tiles on decode products, cold (cold_tuning.py, PINNED=1).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PINNED=1 timeout 500 python3 notes/experiments/cold_tuning.py 12x5120x5120:NT 52x5120x5120:NT 14x8192x8192:NT \
  57x6144x2048:NT 40x8192x3072:NT 64x4096x4096:NT 16x13824x5120:NT > $OUT/cold_tuning.log 2>&1; echo "cold_tuning exit $?"
grep -v "|" $OUT/cold_tuning.log | grep -v "^    " | tail -4 | cut -c1-220
cat $OUT/cold_tuning.log | grep -E "\||^    " | cut -c1-220
