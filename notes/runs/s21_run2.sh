#!/usr/bin/env bash
# Session 21, device run 2: the staged relaunch profiled before any change (staged_profile.py, then
# notes/scratch/dbg.py), and split_parts.py on 12x5120x5120 under CUDA_LAUNCH_BLOCKING=1, synchronizing after each
# graph (a copy of it then, notes/scratch/split_parts_dbg.py, SYNC_EACH=1), to find run 1's illegal address: none came.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 150 python3 notes/experiments/staged_profile.py 2>&1 | tail -80
CUDA_LAUNCH_BLOCKING=1 timeout 150 python3 notes/experiments/split_parts.py 12x5120x5120:NT 2>&1 | grep -v "^ " | tail -30
