#!/usr/bin/env bash
# Session 25, device run 3: PDL off, 1 (the next kernel may start once every program has finished its main loop)
# and 2 (as programs end), graph replay, interleaved (notes/experiments/pdl_ab.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s25r3 timeout 570 python3 notes/experiments/pdl_ab.py "$@" > $OUT/pdl_ab.log 2>&1
echo "exit $?"; grep -v "^    " $OUT/pdl_ab.log | tail -23
