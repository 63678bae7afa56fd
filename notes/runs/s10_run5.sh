#!/usr/bin/env bash
# Session 10, device run 5: the pointer kernel's loads a step ahead (PREFETCH), pinned configs 0 / 1
# (prefetch.py), and the planner's and ops' tests with the rule in place.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s10r5-p timeout 300 python3 notes/experiments/prefetch.py > $OUT/prefetch.log 2>&1
echo "prefetch exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s10r5-t timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_ops.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
sed -n '/^shape/,$p' $OUT/prefetch.log | cut -c1-150; tail -3 $OUT/prefetch.log | grep -i error
