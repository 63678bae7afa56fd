#!/usr/bin/env bash
# Session 23, device run 10: eager host time a call (bench.suites host), at this session's code.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s23r10 timeout 400 python3 -m bench.suites host --rounds 3 > $OUT/host.log 2>&1
echo "host exit $?"; tail -25 $OUT/host.log | cut -c1-200
