#!/usr/bin/env bash
# Session 11, device run 7: memcheck over the Triton kernels (relaunches around Triton's launcher, the
# one-launch operand copies); deeper pipelines on 768-1280^3 (midsize.py deep); the host suite again.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r7-s timeout 260 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
grep -E "WRONG" $OUT/san-triton.log | head -5
TRITONMM_CACHE_DIR=/tmp/tc-s11r7-m timeout 200 python3 notes/experiments/midsize.py deep > $OUT/midsize_deep.log 2>&1
echo "midsize exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r7-h timeout 100 python3 -m bench.suites host --rounds 3 > $OUT/host.log 2>&1
echo "host exit $?"
grep -v "^\[" $OUT/midsize_deep.log | head -50
tail -7 $OUT/host.log
