#!/usr/bin/env bash
# Session 11, device run 9 (final code): the GPU suite; the fp16 sweep.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r9-t timeout 260 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s11r9-fp16 timeout 320 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "fp16 exit $?"
grep -E "^fp16 " $OUT/sweep_fp16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_fp16.log
grep -E "^fp16 +(1|16|64)x|x1027|x1531|x2051|x2999|x2049 |768x768|1024x1024x1024|1536x1536|3072x|4096x4096x4096|8192x8192" $OUT/sweep_fp16.log | cut -c1-200
