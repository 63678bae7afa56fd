#!/usr/bin/env bash
# Session 9, device run 9: fp16 4096^3 NN under 3 and 4 stages, interleaved (stages_4096.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r9
timeout 150 python3 notes/experiments/stages_4096.py 2>&1 | tee $OUT/stages_4096.log | tail -4
