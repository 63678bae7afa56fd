#!/usr/bin/env bash
# Session 12, device run 1: session 11's last commit (e9df7cf, linear's one relaunch call) on the GPU: ops, nn,
# library, fast-launch and planner tests; then 40 bf16 shapes drawn at random (bench/sweep.py's draw, seed 1),
# none of them the sweep's: the planner's rules where they were not tuned.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r1-t timeout 170 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_ops.py tests/test_nn.py tests/test_library.py tests/test_fast_launch.py tests/test_plan.py \
  2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s12r1-bf16 timeout 400 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --draw 40 --seed 1 --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "bf16 exit $?"
tail -3 $OUT/draw_bf16.err | cut -c1-300
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-220; grep -E "over 40" $OUT/draw_bf16.log
