#!/usr/bin/env bash
# Session 9, device run 7: the GPU suite at the session's final code, and the fp16 sweep (fresh cache,
# 3 rounds); run 4's bf16 sweep ran the same kernels and launch path.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
echo "== pytest -n 8"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r7t timeout 250 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 \
  | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r7-fp16 timeout 300 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "fp16 exit $?"
grep -E "^fp16 " $OUT/sweep_fp16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_fp16.log
grep -E "^fp16 +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 " $OUT/sweep_fp16.log | cut -c1-200
