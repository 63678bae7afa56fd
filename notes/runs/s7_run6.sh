#!/usr/bin/env bash
# Session 7, device run 6: GPU suite at the final code (half-octave buckets and the eager staging rule
# came after run 2's suite), then issue 9's model suite (run 5's timed out at 100 s).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r6
echo "== pytest -n 8"
timeout 280 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
echo "== suite model"
timeout 240 python3 -m bench.suites model --rounds 3 > $OUT/suite_model.log 2>&1; echo "exit $?"
tail -14 $OUT/suite_model.log | cut -c1-180
