#!/usr/bin/env bash
# Session 9, device run 5: the TMA kernel's pointer store of C (no staged C): the GPU suite, Triton
# memcheck, and the staged products' breakdown again.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
echo "== pytest -n 8"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r5t timeout 260 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 \
  | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r5-sb timeout 150 python3 notes/experiments/staged_breakdown.py \
  > $OUT/staged_breakdown.log 2>&1; echo "staged_breakdown exit $?"
sed -n '/^shape/,$p' $OUT/staged_breakdown.log; tail -3 $OUT/staged_breakdown.log | grep -i error
echo "== sanitizer (Triton)"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r5s timeout 170 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
