#!/usr/bin/env bash
# Session 19, device run 5: staging for TMA where the pointer kernel reads 8 bytes (wide_read_staging.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 540 python3 notes/experiments/wide_read_staging.py > $OUT/wide.log 2> $OUT/wide.err; echo "exit $?"
tail -5 $OUT/wide.err | cut -c1-300
cut -c1-300 $OUT/wide.log
