#!/usr/bin/env bash
# Session 10, device run 10: after the review's mends (copy_kernel on one grid axis, int64 tile ids; the
# sanitizer's copy section and an unaligned shape with K past 64; the compile suite checks a replayed
# graph and counts CUDA-graph skips): the planner, precision, ops and library tests, memcheck, the
# compile suite in one round.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r10-t timeout 170 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_precision.py tests/test_ops.py tests/test_library.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s10r10-s timeout 240 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
TRITONMM_CACHE_DIR=/tmp/tc-s10r10-c timeout 150 python3 -m bench.suites compile --rounds 1 > $OUT/compile.log 2>&1
echo "compile exit $?"; tail -7 $OUT/compile.log
