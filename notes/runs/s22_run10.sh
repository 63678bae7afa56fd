#!/usr/bin/env bash
# Session 22, device run 10: short tiles for few rows on the TMA kernel: their tests on the GPU, then shipped against none, tuned cold.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s22r10t timeout 150 python3 -m pytest -q -n 8 tests/test_config_space.py tests/test_plan.py \
  tests/test_ops.py -k "short or heuristic or every_config" > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -2 $OUT/tests.log | cut -c1-200
grep -E "^FAILED|^ERROR" $OUT/tests.log | head -5 | cut -c1-300
RULE=short timeout 400 python3 notes/experiments/tma_split_shipped.py > $OUT/short_shipped.log 2>&1; echo "short_shipped exit $?"
sed -n '/^shape/,$p' $OUT/short_shipped.log | cut -c1-230
tail -3 $OUT/short_shipped.log | cut -c1-200
