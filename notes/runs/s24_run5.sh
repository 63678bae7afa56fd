#!/usr/bin/env bash
# Session 24, device run 5: tiles of two accumulators, 1.5x a power of two wide (notes/experiments/wide_tiles.py, removed
# after the run: it asked session 9's and 19's question again, tile_192.py's; its log is notes/runs/s24/wide_tiles_run5.log).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tc-s24r5 timeout 560 python3 notes/experiments/wide_tiles.py 5 \
  > $OUT/wide_tiles.log 2>&1
echo "exit $?"; grep -v "^  (" $OUT/wide_tiles.log | tail -30; grep -A12 "^== 3072x" $OUT/wide_tiles.log
