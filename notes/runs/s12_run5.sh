#!/usr/bin/env bash
# Session 12, device run 5: the GPU suite after the alignment hints and the staging bar of 16 multiply-adds
# per byte.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r5-t timeout 480 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
