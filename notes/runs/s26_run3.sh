#!/usr/bin/env bash
# Session 26, device run 3: the GPU suite with copy_kernel's small-tile rule (plan.COPY_MIN_PROGRAMS_PER_SM = 6), then
# the rule as shipped against 64x64 tiles always on staged products not in the sweep (settings_ab.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s26r3 timeout 330 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s26r3ab timeout 220 python3 notes/experiments/settings_ab.py 1531x777x913:NN \
  619x1203x1797:NT 1111x1111x1111:NN 2500x900x700:NN 1200x3001x1000:NT 801x801x3001:NN 300x2050x1030:NT \
  > $OUT/settings_ab.log 2>&1; echo "ab exit $?"
grep -v "^    " $OUT/settings_ab.log | tail -10 | cut -c1-200
tail -2 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
