#!/usr/bin/env bash
# Session 23, device run 9: every candidate cold on seed 10's three lowest shapes (cold_tuning.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 300 python3 notes/experiments/cold_tuning.py 1856x1136x1904:NN 473x5120x5120:NT 432x1824x944:NN \
  > $OUT/cold_tuning.log 2>&1; echo "cold_tuning exit $?"
grep -v "|" $OUT/cold_tuning.log | grep -v "^    " | tail -4 | cut -c1-220
cat $OUT/cold_tuning.log | cut -c1-200 | head -80
