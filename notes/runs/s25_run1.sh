#!/usr/bin/env bash
# Session 25, device run 1: split-K's first launch alone against whole calls and cuBLAS (the bound of an in-kernel
# fix-up; notes/experiments/split_first_pass.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tc-s25r1 timeout 570 python3 \
  notes/experiments/split_first_pass.py "$@" > $OUT/split_first_pass.log 2>&1
echo "exit $?"; grep -v "^    " $OUT/split_first_pass.log | tail -25
