#!/usr/bin/env bash
# Session 7, device run 2: GPU suite at the session's code (graph-timed tuning ranked against host
# time, the 16-bit space's two new configs, the TMA kernel in CUDA graphs from TMA_MIN_MACS / 4, the
# wave-tail split), then Triton memcheck over every path (the wave-tail split included).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== pytest -n 8"
timeout 270 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
echo "== sanitizer (Triton)"
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
