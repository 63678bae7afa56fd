#!/usr/bin/env bash
# (Ran at e698a82, whose stream-K kernel and experiment scripts were reverted afterwards.)
# Session 6, device run 1: stream-K (kernels/stream_k.py) on the GPU: its tests and the planner's, the
# stream-K experiment (every 16-bit config DP vs SK vs pointer vs cuBLAS), Triton memcheck over every path.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== pytest test_plan test_config_space"
timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py tests/test_config_space.py 2>&1 | tee $OUT/pytest.log | tail -4
echo "== stream-K experiment"
timeout 280 python3 notes/experiments/stream_k.py > $OUT/stream_k.log 2>&1; echo "exit $?"
echo "== sanitizer (Triton)"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
tail -45 $OUT/stream_k.log
