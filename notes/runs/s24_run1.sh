#!/usr/bin/env bash
# Session 24, device run 1: where tritonmm.linear's host time goes (notes/experiments/linear_host.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s24r1 timeout 300 python3 notes/experiments/linear_host.py > $OUT/linear_host.log 2>&1
echo "exit $?"; grep -v "^ *[0-9]*  *0.0" $OUT/linear_host.log | cut -c1-150 | tail -150
