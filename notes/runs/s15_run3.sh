#!/usr/bin/env bash
# Session 15, device run 3: the GPU suite with the pointer kernel's staging (run twice: the first found FP8 copies broken by the padding).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s15r3 timeout 330 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
