#!/usr/bin/env bash
# Session 17, device run 1: 4-byte reads staged for the pointer kernel, A/B with a per-kernel breakdown
# (notes/experiments/stage_breakdown.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 540 python3 notes/experiments/stage_breakdown.py > $OUT/stage_breakdown.log 2>&1; echo "exit $?"
grep -v "^\[" $OUT/stage_breakdown.log | tail -40 | cut -c1-330
