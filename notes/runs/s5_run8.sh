#!/usr/bin/env bash
# Session 5, run 8: the bf16 sweep with the TMA kernel's descriptors made on the device (graph and eager),
# against session 4's host-descriptor sweep (bench/results/sweep_bf16 before this run).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
timeout 330 python3 -m bench --preset sweep --dtype bf16 --out $OUT/sweep_bf16 2>$OUT/sweep.err | tee $OUT/sweep.log | tail -52 | cut -c1-200
tail -2 $OUT/sweep.err
