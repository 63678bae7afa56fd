#!/usr/bin/env bash
# Session 22, device run 12: memcheck over the Triton kernels again, epilogue products checked against |a| @ |b| + |bias|.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s22r12s timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
  python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton|WRONG' $OUT/san-triton.log | head -5 | tr '\n' ' ')"
