#!/usr/bin/env bash
# Session 23, device run 6: products of 90-300 rows against a large weight, every candidate and 14 pinned configs
# (slices of K, 256-row tiles) timed cold (cold_tuning.py, PINNED=3).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
PINNED=3 timeout 560 python3 notes/experiments/cold_tuning.py 141x3072x8192:NT 100x4096x4096:NT 90x3072x6144:NT \
  250x6144x4096:NT 128x4096x4096:NT 200x8192x8192:NT > $OUT/cold_tuning.log 2>&1; echo "cold_tuning exit $?"
grep -v "|" $OUT/cold_tuning.log | grep -v "^    " | tail -4 | cut -c1-220
grep -E "\|" $OUT/cold_tuning.log | cut -c1-220
