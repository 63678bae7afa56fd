#!/usr/bin/env bash
# Session 20, device run 1: split-K on the TMA kernel against the best unsplit candidate (notes/experiments/tma_split_k.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
timeout 570 python3 notes/experiments/tma_split_k.py > $OUT/tma_split_k.log 2> $OUT/tma_split_k.err; echo "exit $?"
tail -5 $OUT/tma_split_k.err | cut -c1-300
grep -v "^  " $OUT/tma_split_k.log | cut -c1-400
