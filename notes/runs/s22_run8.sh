#!/usr/bin/env bash
# Session 22, device run 8 (final code: the read-flushed timing): the GPU suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s22r8 timeout 330 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
tail -4 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
