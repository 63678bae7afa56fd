#!/usr/bin/env bash
# Session 10, device run 9: host and device time a call of the compile suite's block (compile_host.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r9 timeout 240 python3 notes/experiments/compile_host.py > $OUT/compile_host.log 2>&1
echo "compile_host exit $?"; sed -n '/^M /,$p' $OUT/compile_host.log; tail -3 $OUT/compile_host.log | grep -i error
