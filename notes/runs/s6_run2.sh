#!/usr/bin/env bash
# (Ran at e698a82, whose stream-K kernel and experiment scripts were reverted afterwards.)
# Session 6, device run 2: stream-K as one pipelined loop (the piece for the owner first, its own loop); its tests,
# the experiment again, Triton memcheck over every path with a longer limit.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== pytest test_plan test_config_space"
timeout 100 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_plan.py -k "stream_k or staged or gpu" 2>&1 | tee $OUT/pytest.log | tail -4
echo "== stream-K experiment"
timeout 200 python3 notes/experiments/stream_k.py > $OUT/stream_k.log 2>&1; echo "exit $?"
echo "== sanitizer (Triton)"
timeout 250 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
tail -45 $OUT/stream_k.log
