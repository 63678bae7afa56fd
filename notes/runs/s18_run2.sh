#!/usr/bin/env bash
# Session 18, device run 2: the TMA kernel's split tail (TAIL=2): its tests on the GPU (and the wave-tail and
# relaunch tests beside them), then notes/experiments/split_tail.py (every candidate of 10 shapes, the best
# with and without a split tail against torch.mm).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s18r2-t timeout 200 python3 -m pytest -q -n 8 -p no:cacheprovider -p no:warnings \
  tests/test_plan.py -k "tail or relaunch or stores_through" > $OUT/tests.log 2>&1; echo "tests exit $?"
grep -E "passed|failed|Error" $OUT/tests.log | tail -5
TRITONMM_CACHE_DIR=/tmp/tc-s18r2-x timeout 370 python3 notes/experiments/split_tail.py > $OUT/split_tail.log \
  2>$OUT/split_tail.err; echo "experiment exit $?"
tail -5 $OUT/split_tail.err | cut -c1-300
cat $OUT/split_tail.log | cut -c1-400
