#!/usr/bin/env bash
# Session 19, device run 6: the GPU suite on the final code.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s19r6 timeout 560 python3 -m pytest -q -n 8 -p no:cacheprovider -p no:warnings tests \
  > $OUT/suite.log 2>&1; echo "suite exit $?"
grep -E "^(FAILED|ERROR)" $OUT/suite.log | head -20; tail -2 $OUT/suite.log
