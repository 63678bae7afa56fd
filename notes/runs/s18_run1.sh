#!/usr/bin/env bash
# Session 18, device run 1 (session 17's final code, ca1197b): a held-out check of the rules on 24 shapes drawn
# with a new seed (5) in bf16, then the test files session 17's tall-tile rule touched, on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
TRITONMM_CACHE_DIR=/tmp/tc-s18r1-draw timeout 470 python3 -m bench --preset sweep --dtype bf16 --rounds 3 --draw 24 --seed 5 \
  --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "draw exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s18r1-t timeout 100 python3 -m pytest -q -x -n 8 -p no:cacheprovider -p no:warnings \
  tests/test_config_space.py tests/test_fast_launch.py > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -1 $OUT/tests.log
grep -E "over 24" $OUT/draw_bf16.log | cut -c1-250
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-200
