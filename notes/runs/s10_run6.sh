#!/usr/bin/env bash
# Session 10, device run 6: the GPU suite with PREFETCH tuned for unpipelined pointer products, and the
# bf16 sweep (fresh cache, 3 rounds).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r6-t timeout 270 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests \
  2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tc-s10r6-bf16 timeout 300 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x|x1531|x1027|x2051|x2999|x2049 |4096x4096x4096|8192x8192|prefetch" $OUT/sweep_bf16.log | cut -c1-200
