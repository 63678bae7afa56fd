#!/usr/bin/env bash
# Session 13, device run 4: the pointer kernel's hints on the 1-D offset terms (before broadcast) against session 12's
# [VEC, 1] claims (notes/experiments/hint_ab.py), then the GPU suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r4 timeout 150 python3 notes/experiments/hint_ab.py notes/experiments/gemm_hints_s12.py \
  > $OUT/hint_ab.log 2>&1; echo "hint_ab exit $?"; tail -14 $OUT/hint_ab.log | cut -c1-220
[ -n "$HINTS_ONLY" ] || TRITONMM_CACHE_DIR=/tmp/tc-s13r4-t timeout 420 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
