#!/usr/bin/env bash
# Session 5, run 6: issue 10 probes: decode configs (small-M tiles, deep K, split-K) against cuBLAS and
# the read bandwidth; where the TMA path's host time goes.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== TMA host profile"
timeout 90 python3 notes/experiments/tma_host_profile.py > $OUT/host_profile.log 2>&1; grep -A14 "^== " $OUT/host_profile.log | cut -c1-150
echo "== decode configs"
timeout 300 python3 notes/experiments/decode_configs.py > $OUT/decode.log 2>&1; tail -45 $OUT/decode.log
