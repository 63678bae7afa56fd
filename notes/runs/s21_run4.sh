#!/usr/bin/env bash
# Session 21, device run 4: the GPU suite (copy's relaunch reordered, staged buffers by new_empty_strided, eager
# staging from 2**30) and split_parts.py (split-K's two launches taken apart, workspaces kept alive this time).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s21r3 timeout 330 python3 -m pytest -q -n 8 tests > $OUT/suite.log 2>&1; echo "suite exit $?"
tail -4 $OUT/suite.log | cut -c1-300; grep -E "^FAILED|^ERROR" $OUT/suite.log | head -10 | cut -c1-300
timeout 200 python3 notes/experiments/split_parts.py > $OUT/split_parts.log 2>$OUT/split_parts.err; echo "split_parts exit $?"
tail -n 3 $OUT/split_parts.err | cut -c1-300
grep -E "cuBLAS" $OUT/split_parts.log | cut -c1-300
sed -n '/^shape/,$p' $OUT/split_parts.log
