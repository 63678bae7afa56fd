#!/usr/bin/env bash
# Session 9, device run 1 (experiments only): a GEMV without tensor cores for decode products,
# a 128x192 tile from two accumulators for the mid-size squares, and cuBLAS's kernels there.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 240 python3 notes/experiments/wide_tile.py > $OUT/wide_tile.log 2>&1; echo "wide_tile exit $?"
timeout 240 python3 notes/experiments/gemv_stream.py > $OUT/gemv_stream.log 2>&1; echo "gemv_stream exit $?"
grep -v "^\(shape\|---\)" $OUT/wide_tile.log | head -8
sed -n '/^shape/,$p' $OUT/wide_tile.log
sed -n '/^shape/,$p' $OUT/gemv_stream.log
tail -5 $OUT/wide_tile.log $OUT/gemv_stream.log | grep -i error
