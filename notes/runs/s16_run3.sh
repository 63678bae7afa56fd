#!/usr/bin/env bash
# Session 16, device run 3: 256-row tiles on tall products (notes/experiments/tall_tiles.py), then the GPU suite
# at HEAD (session 15's refactored GPU tests and the override-warning test had not run on torch 2.11).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s16r3 timeout 200 python3 notes/experiments/tall_tiles.py > $OUT/tall_tiles.log 2>$OUT/tall_tiles.err
echo "tall_tiles exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s16r3-suite timeout 340 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/suite.log 2>&1; echo "suite exit $?"
grep -E "FAILED|ERROR" $OUT/suite.log | head -20 | cut -c1-250; tail -2 $OUT/suite.log
tail -4 $OUT/tall_tiles.err | cut -c1-200; cut -c1-300 $OUT/tall_tiles.log
