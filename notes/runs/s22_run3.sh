#!/usr/bin/env bash
# Session 22, device run 3: candidates ranked L2-warm (the tuner) against cold (cold_tuning.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 540 python3 notes/experiments/cold_tuning.py > $OUT/cold_tuning.log 2>&1; echo "cold_tuning exit $?"
grep -v "|" $OUT/cold_tuning.log | grep -v "^    " | tail -4 | cut -c1-200
cat $OUT/cold_tuning.log | grep -E "\||^    " | cut -c1-200
