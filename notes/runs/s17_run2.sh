#!/usr/bin/env bash
# Session 17, device run 2: session 16's planner (a copy under _ab/, see stage_breakdown.py) against this one
# (4-byte reads staged where the copies pay; the TMA kernel stores C through pointers where TMA cannot write it),
# then the GPU suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
WIDTHS=s16,4 timeout 280 python3 notes/experiments/stage_breakdown.py 1023x1025x1027:NN 2000x3001x2048:NT 97x70x786:NT \
  93x529x6074:NT 512x382x1030:NN 48x4100x2050:NT 250x118x1998:NT 600x150x3070:NT 96x1500x4094:NT \
  > $OUT/stage_breakdown.log 2>&1; echo "breakdown exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s17r2-suite timeout 310 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/suite.log 2>&1; echo "suite exit $?"
grep -E "FAILED|ERROR" $OUT/suite.log | head -20 | cut -c1-250; tail -2 $OUT/suite.log
grep -v "^\[" $OUT/stage_breakdown.log | grep -v Warn | tail -24 | cut -c1-300
