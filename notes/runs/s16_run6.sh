#!/usr/bin/env bash
# Session 16, device run 6: graph-only plans ranked by device time (notes/experiments/graph_only_rank.py), then the
# GPU suite with it and the 256x128 tiles.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 230 python3 notes/experiments/graph_only_rank.py > $OUT/graph_only_rank.log 2>&1; echo "graph_only_rank exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s16r6-suite timeout 330 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/suite.log 2>&1; echo "suite exit $?"
grep -E "FAILED|ERROR" $OUT/suite.log | head -20 | cut -c1-250; tail -2 $OUT/suite.log
tail -14 $OUT/graph_only_rank.log | cut -c1-250
