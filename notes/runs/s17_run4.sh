#!/usr/bin/env bash
# Session 17, device run 4 (final code: the tall tile timed only where N leaves a 256-wide column mostly empty):
# the tests of the session's changes on the GPU, the fp16 sweep (run 3's timed out), and 20 shapes drawn with a
# new seed (5) in bf16: a held-out check of the rules.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s17r4-t timeout 60 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_plan.py \
  -k "tall or stores_through or staging_rule or staged" > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -1 $OUT/tests.log
TRITONMM_CACHE_DIR=/tmp/tc-s17r4-fp16 timeout 295 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "fp16 exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s17r4-draw timeout 215 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 20 --seed 5 \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
grep -E "^fp16 " $OUT/sweep_fp16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 4" $OUT/sweep_fp16.log | cut -c1-250
grep -E "^fp16 +(4096x4096x4096|1x4096x4096|1023x1025)" $OUT/sweep_fp16.log | cut -c1-200
grep -E "over 20" $OUT/draw_bf16.log | cut -c1-250
grep -E "^bf16 " $OUT/draw_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200
