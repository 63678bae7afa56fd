#!/usr/bin/env bash
# Session 12, device run 3 (run 2 again, split: its tests hit their time limit at 94% with no failure, and
# row_alignment.py's no-hints variant had a bad signature): planner and ops tests; row_alignment.py.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r3-t timeout 260 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_ops.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s12r3-x timeout 300 python3 notes/experiments/row_alignment.py > $OUT/row_alignment.log 2>&1
echo "row_alignment exit $?"; tail -14 $OUT/row_alignment.log | cut -c1-250
