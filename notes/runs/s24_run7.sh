#!/usr/bin/env bash
# Session 24, device run 7: the host suite twice in one process (run 6 timed the same 64^3 TMA mm at 1.36x torch.mm
# in its first TMA row and 1.16x two rows later).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s24r7 timeout 300 python3 -m bench.suites host host --rounds 15 > $OUT/host.log 2>&1
echo "host exit $?"; grep -A9 "^shape\|^## " $OUT/host.log | cut -c1-200
