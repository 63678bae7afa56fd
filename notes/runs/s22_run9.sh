#!/usr/bin/env bash
# Session 22, device run 9: tiles of 16 and 32 rows on decode products, cold (cold_tuning.py, PINNED=2).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PINNED=2 timeout 500 python3 notes/experiments/cold_tuning.py 12x5120x5120:NT 52x5120x5120:NT 14x8192x8192:NT \
  12x8192x8192:NT 16x14336x4096:NT 64x5120x5120:NT 32x5120x13824:NT 16x4096x4096:NT > $OUT/cold_tuning.log 2>&1; echo "cold_tuning exit $?"
grep -v "|" $OUT/cold_tuning.log | grep -v "^    " | tail -4 | cut -c1-220
grep -E "\|" $OUT/cold_tuning.log | cut -c1-220
