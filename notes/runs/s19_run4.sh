#!/usr/bin/env bash
# Session 19, device run 4: captured products ranked by device time (notes/experiments/graph_twin.py), and the
# tests of the change on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s19r4-t timeout 120 python3 -m pytest -q -n 8 -p no:cacheprovider -p no:warnings \
  tests/test_plan.py -k "twin or tuning_ranks or key_apart or graph" > $OUT/tests.log 2>&1; echo "tests exit $?"
grep -E "passed|failed|Error" $OUT/tests.log | tail -5
timeout 420 python3 notes/experiments/graph_twin.py > $OUT/graph_twin.log 2> $OUT/graph_twin.err; echo "exit $?"
tail -5 $OUT/graph_twin.err | cut -c1-300
cut -c1-260 $OUT/graph_twin.log
