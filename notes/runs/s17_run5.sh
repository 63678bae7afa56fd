#!/usr/bin/env bash
# Session 17, device run 5: run 4 on a fresh machine timed out in Triton's cold compiles; on the same machine
# (compiled kernels and run 4's partial tuning cache kept): the tests of the session's changes, in parallel,
# then the fp16 sweep.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s17r5-t timeout 70 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py \
  tests/test_config_space.py tests/test_fast_launch.py > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -1 $OUT/tests.log
TRITONMM_CACHE_DIR=/tmp/tc-s17r4-fp16 timeout 320 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "fp16 exit $?"
grep -E "^fp16 " $OUT/sweep_fp16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 4" $OUT/sweep_fp16.log | cut -c1-250
