#!/usr/bin/env bash
# Session 10, device run 2: the GPU suite with the vectorized staging copies, and the compile suite
# with its new mode="reduce-overhead" column.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r2-t timeout 330 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests \
  2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tc-s10r2-c timeout 230 python3 -m bench.suites compile --rounds 3 > $OUT/compile.log 2>&1
echo "compile exit $?"; tail -8 $OUT/compile.log
