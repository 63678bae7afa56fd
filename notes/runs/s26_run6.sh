#!/usr/bin/env bash
# Session 26, device run 6: memcheck over the Triton kernels (copy_kernel on both its tiles now), its compile cache
# warmed by a plain run first (cold, memcheck passed 300 s in session 25); then session 23's held-out draw (seed 10,
# 24 shapes, bf16) with the copy's small-tile rule.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s26r6s timeout 150 python3 tests/sanitize_triton.py > $OUT/san-warm.log 2>&1
echo "warm exit $? $(tail -1 $OUT/san-warm.log | cut -c1-200)"
TRITONMM_CACHE_DIR=/tmp/tc-s26r6s timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
TRITONMM_CACHE_DIR=/tmp/tc-s26r6-draw timeout 330 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 24 \
  --seed 10 --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
tail -2 $OUT/draw_bf16.err | cut -c1-300
grep -E "over 24" $OUT/draw_bf16.log | cut -c1-250
