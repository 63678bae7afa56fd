#!/usr/bin/env bash
# Session 24, device run 6: the GPU suite at this session's relaunch changes (no settings in launch_key, the result
# allocated by new_empty_strided, linear keyed by its weight), then the host suite, 15 rounds.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s24r6 timeout 400 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s24r6h timeout 150 python3 -m bench.suites host --rounds 15 > $OUT/host.log 2>&1
echo "host exit $?"; tail -10 $OUT/host.log | cut -c1-200
tail -2 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
