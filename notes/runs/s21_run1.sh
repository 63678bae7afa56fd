#!/usr/bin/env bash
# Session 21, device run 1: eager staging against the shipped eager bar (eager_staging.py); split-K's two launches
# taken apart in graph replay (split_parts.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 330 python3 notes/experiments/eager_staging.py > $OUT/eager_staging.log 2>$OUT/eager_staging.err; echo "eager_staging exit $?"
timeout 220 python3 notes/experiments/split_parts.py > $OUT/split_parts.log 2>$OUT/split_parts.err; echo "split_parts exit $?"
tail -3 $OUT/eager_staging.err $OUT/split_parts.err | cut -c1-300
grep -E "cuBLAS" $OUT/split_parts.log | cut -c1-400
sed -n '/^shape/,$p' $OUT/split_parts.log
sed -n '/^shape/,$p' $OUT/eager_staging.log
