#!/usr/bin/env bash
# Session 22, device run 2: decode products on each kernel path, read-flushed graph replay (decode_paths.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 500 python3 notes/experiments/decode_paths.py > $OUT/decode_paths.log 2>&1; echo "decode_paths exit $?"
grep -v "|" $OUT/decode_paths.log | tail -5 | cut -c1-200
grep "|" $OUT/decode_paths.log | cut -c1-170
