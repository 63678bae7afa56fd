#!/usr/bin/env bash
# Session 10, device run 7: the bf16 sweep with PREFETCH beside split-K configs only (fresh cache, 3 rounds),
# and Triton memcheck (the sanitizer's new PREFETCH section).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r7-bf16 timeout 330 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s10r7-s timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 |4096x4096x4096|8192x8192|prefetch" $OUT/sweep_bf16.log | cut -c1-200
tr '\r' '\n' < $OUT/sweep_bf16.err | grep -o "[0-9]*/46 \[[0-9:]*" | tail -8 | tr '\n' ' '
