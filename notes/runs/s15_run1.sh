#!/usr/bin/env bash
# Session 15, device run 1: staging unaligned operands for the pointer kernel (notes/experiments/pointer_staging.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
TRITONMM_CACHE_DIR=/tmp/tc-s15r1 timeout 520 python3 notes/experiments/pointer_staging.py > $OUT/pointer_staging.log 2>&1
echo "pointer_staging exit $?"; tail -16 $OUT/pointer_staging.log | cut -c1-250
