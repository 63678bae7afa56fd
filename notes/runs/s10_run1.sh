#!/usr/bin/env bash
# Session 10, device run 1: the staging copies vectorized (inner tiles unmasked, rows padded to 16
# elements): their tests, copy rates old / new / funnel / torch (copy_rates.py), a staged product's
# pieces (staged_breakdown.py); decode with 16 and 64 rows swapped, C.T = W @ x.T (decode_swap.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r1-t timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_precision.py -k "copies or split or transpose or stag or unaligned" 2>&1 \
  | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s10r1-c timeout 100 python3 notes/experiments/copy_rates.py > $OUT/copy_rates.log 2>&1
echo "copy_rates exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s10r1-s timeout 120 python3 notes/experiments/staged_breakdown.py > $OUT/staged.log 2>&1
echo "staged exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s10r1-d timeout 200 python3 notes/experiments/decode_swap.py > $OUT/decode_swap.log 2>&1
echo "decode_swap exit $?"
sed -n '/^copy /,$p' $OUT/copy_rates.log; tail -2 $OUT/copy_rates.log | grep -i error
sed -n '/^shape/,$p' $OUT/staged.log | cut -c1-120; tail -2 $OUT/staged.log | grep -i error
sed -n '/^shape/,$p' $OUT/decode_swap.log | cut -c1-130; tail -3 $OUT/decode_swap.log | grep -i error
