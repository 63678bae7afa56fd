#!/usr/bin/env bash
# Session 22, device run 1: do_bench's memset flush against a read-only flush (l2_flush.py); decode swapped, read-flushed.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 60 python3 -m pytest -q tests/test_timing.py 2>&1 | tail -2
TRITONMM_CACHE_DIR=/tmp/tc-s22r1 timeout 240 python3 notes/experiments/l2_flush.py > $OUT/l2_flush.log 2>&1; echo "l2_flush exit $?"
FLUSH=read TRITONMM_CACHE_DIR=/tmp/tc-s22r1b timeout 220 python3 notes/experiments/decode_swap.py > $OUT/decode_swap.log 2>&1; echo "decode_swap exit $?"
sed -n "/^shape/,\$p" $OUT/decode_swap.log | cut -c1-170
grep -E "read TB/s|x torch.mm" $OUT/l2_flush.log
sed -n '/^shape/,$p' $OUT/l2_flush.log
