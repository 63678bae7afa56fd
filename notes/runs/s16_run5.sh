#!/usr/bin/env bash
# Session 16, device run 5: small products slower in a CUDA graph than eagerly (notes/experiments/graph_vs_eager.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s16r5 timeout 300 python3 notes/experiments/graph_vs_eager.py > $OUT/graph_vs_eager.log 2>&1
echo "graph_vs_eager exit $?"; cut -c1-300 $OUT/graph_vs_eager.log | tail -30
