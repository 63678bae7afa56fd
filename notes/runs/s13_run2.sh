#!/usr/bin/env bash
# Session 13, device run 2: where stream-K's time goes (notes/experiments/stream_k_parts.py); the stream-K GPU tests.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r2 timeout 240 python3 notes/experiments/stream_k_parts.py > $OUT/parts.log 2>&1
echo "parts exit $?"; tail -22 $OUT/parts.log | cut -c1-200
TRITONMM_CACHE_DIR=/tmp/tc-s13r2-t timeout 120 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 \
  tests/test_plan.py -k stream_k > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -5
