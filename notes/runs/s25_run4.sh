#!/usr/bin/env bash
# Session 25, device run 4: the GPU suite with PDL on (the default now; the chained-product tests new), then the
# host suite, 15 rounds (the launches now carry launch_pdl).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r4 timeout 400 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s25r4h timeout 170 python3 -m bench.suites host --rounds 15 > $OUT/host.log 2>&1
echo "host exit $?"; tail -12 $OUT/host.log | cut -c1-200
tail -2 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
