#!/usr/bin/env bash
# Session 12, device run 4: row_alignment.py's staged variant: unaligned products under the staging rule's
# 40 multiply-adds per byte, staged by force, against the rules' pointer kernel and torch.mm.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r4-x timeout 500 python3 notes/experiments/row_alignment.py > $OUT/row_alignment.log 2>&1
echo "row_alignment exit $?"; tail -14 $OUT/row_alignment.log | cut -c1-250
