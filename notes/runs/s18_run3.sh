#!/usr/bin/env bash
# Session 18, device run 3: the split tail's parts timed alone (notes/experiments/split_tail_parts.py), and its
# epilogue test again (run 2's failed on the test's own bias for FP8).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s18r3-x timeout 300 python3 notes/experiments/split_tail_parts.py > $OUT/parts.log \
  2>$OUT/parts.err; echo "experiment exit $?"; tail -3 $OUT/parts.err | cut -c1-300
TRITONMM_CACHE_DIR=/tmp/tc-s18r3-t timeout 100 python3 -m pytest -q -n 4 -p no:cacheprovider -p no:warnings \
  tests/test_plan.py -k "split_tail" > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -1 $OUT/tests.log
tail -6 $OUT/parts.log
