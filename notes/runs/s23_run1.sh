#!/usr/bin/env bash
# Session 23, device run 1: the last row and column of TMA tiles moved back inside C, on and off (row_shift.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 560 python3 notes/experiments/row_shift.py > $OUT/row_shift.log 2>&1; echo "row_shift exit $?"
grep -v "|" $OUT/row_shift.log | grep -v "^    " | tail -4 | cut -c1-220
grep -E "\|" $OUT/row_shift.log | cut -c1-220
