#!/usr/bin/env bash
# Session 11, device run 8: after 64x128x128 s4 joined the 16-bit space and captured products take the TMA
# kernel from 2**28: planner, config-space, tuner, ops, fast-launch and library tests; the bf16 sweep.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r8-t timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_config_space.py tests/test_tune.py tests/test_ops.py tests/test_fast_launch.py \
  tests/test_library.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s11r8-bf16 timeout 420 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "^bf16 +(1|16|64)x|x1027|x2999|x2049 |768x768|1024x1024x1024|1280|1536x1536|2048x2048x2048|3072x|4096x4096x4096|8192x8192" $OUT/sweep_bf16.log | cut -c1-200
