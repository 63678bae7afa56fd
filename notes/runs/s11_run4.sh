#!/usr/bin/env bash
# Session 11, device run 4: the GPU suite at the session's code (direct C launches, both staged operands
# copied in one launch, the 6-stage 16-bit tiles); the host suite (3 rounds); the staged products' pieces.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r4-t timeout 330 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s11r4-h timeout 120 python3 -m bench.suites host --rounds 3 > $OUT/host.log 2>&1
echo "host exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r4-s timeout 120 python3 notes/experiments/staged_breakdown.py > $OUT/staged.log 2>&1
echo "staged exit $?"
tail -8 $OUT/host.log
tail -22 $OUT/staged.log
