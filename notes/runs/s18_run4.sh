#!/usr/bin/env bash
# Session 18, device run 4: the split tail's second pass loading every slice at once, 2048 elements a program
# (run 3: 5-9 us one slice at a time): its parts again, then split_tail.py's comparison of the best candidates.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s18r4-t timeout 100 python3 -m pytest -q -n 4 -p no:cacheprovider -p no:warnings \
  tests/test_plan.py -k "split_tail" > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -1 $OUT/tests.log
TRITONMM_CACHE_DIR=/tmp/tc-s18r4-x timeout 200 python3 notes/experiments/split_tail_parts.py > $OUT/parts.log \
  2>$OUT/parts.err; echo "parts exit $?"; tail -3 $OUT/parts.err | cut -c1-300
TRITONMM_CACHE_DIR=/tmp/tc-s18r4-y timeout 300 python3 notes/experiments/split_tail.py > $OUT/split_tail.log \
  2>$OUT/split_tail.err; echo "experiment exit $?"; tail -3 $OUT/split_tail.err | cut -c1-300
tail -6 $OUT/parts.log; tail -12 $OUT/split_tail.log | cut -c1-230
