#!/usr/bin/env bash
# Session 23, device run 13: the GPU suite after the second review (the shift's last-tile starts hoisted out of the
# TMA kernel's persistent loop).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r13 timeout 400 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
tail -2 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
