#!/usr/bin/env bash
# Session 8, device run 7: after run 5, a partial last K step keys tuning apart (config_space.tuning_shape):
# the tuner, cache and planner tests on the GPU, then the bf16 sweep again (fresh cache, 3 rounds).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
echo "== pytest -n 8 (tune, cache, plan, config_space, library)"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r7t timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_tune.py tests/test_cache.py tests/test_plan.py tests/test_config_space.py tests/test_library.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r7-bf16 timeout 300 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "bf16 exit $?"
grep -E "^bf16 " $OUT/sweep_bf16.log | awk '$6 < 0.9 {print}' | cut -c1-200; grep -E "over 46" $OUT/sweep_bf16.log
grep -E "3072x3072x3072|3000x3008x3000" $OUT/sweep_bf16.log | cut -c1-200
