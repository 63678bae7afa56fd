#!/usr/bin/env bash
# Session 9, device run 3: the GPU suite at the session's code (the one-row kernel reading the caller's
# tensors, the relaunch path's single hash), Triton memcheck over every path (the one-row kernel's
# included), and the host suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== pytest -n 8"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r3t timeout 260 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 \
  | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
echo "== sanitizer (Triton)"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r3s timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
echo "== suite host"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r3h timeout 120 python3 -m bench.suites host --rounds 3 > $OUT/suite_host.log 2>&1
echo "exit $?"; tail -12 $OUT/suite_host.log | cut -c1-200
