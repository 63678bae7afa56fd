#!/usr/bin/env bash
# Session 7, device run 8: TinyGPT w2048's products one by one (run 6: the step at 0.70x aten swapped).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r8
timeout 400 python3 notes/experiments/model_products.py > $OUT/model_products.log 2>&1; echo "exit $?"
tail -40 $OUT/model_products.log | cut -c1-200
