#!/usr/bin/env bash
# Session 23, device run 11: the experiments after the review (cold_tuning.py's setup shared with row_shift.py),
# each on one small shape, to show they still run.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 120 python3 notes/experiments/row_shift.py 1280x928x416:NN > $OUT/row_shift.log 2>&1; echo "row_shift exit $?"
tail -3 $OUT/row_shift.log | cut -c1-220
PINNED=3 timeout 120 python3 notes/experiments/cold_tuning.py 141x3072x8192:NT > $OUT/cold_tuning.log 2>&1
echo "cold_tuning exit $?"; tail -3 $OUT/cold_tuning.log | cut -c1-220
