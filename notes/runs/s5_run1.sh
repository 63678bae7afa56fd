#!/usr/bin/env bash
# Session 5, device run 1: GPU suite at session 4's last commits plus tf32x3 on split operands; the tf32x3
# table (4096^3, 8192^3, 3 rounds); Triton memcheck over every path (the split tf32x3 kernel included).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== pytest -n 8"
timeout 240 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -4
echo "== tf32x3"
timeout 150 python3 -m bench --dtype tf32x3 --shape 4096x4096x4096 --shape 8192x8192x8192 --rounds 3 2>$OUT/tf32x3.err | tee $OUT/tf32x3.log | tail -16
tail -3 $OUT/tf32x3.err
echo "== sanitizer (Triton)"
timeout 160 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
