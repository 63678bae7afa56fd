#!/usr/bin/env bash
# Session 19, device run 1: tiles of 192 columns or rows as two dots (notes/experiments/tile_192.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tc-s19r1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 560 python3 notes/experiments/tile_192.py > $OUT/tile_192.log 2> $OUT/tile_192.err; echo "exit $?"
tail -5 $OUT/tile_192.err | cut -c1-300
cut -c1-330 $OUT/tile_192.log
