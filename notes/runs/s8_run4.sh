#!/usr/bin/env bash
# Session 8, device run 4: GPU suite at the session's code (eager autograd through Functions, the
# opaque operators on the dispatcher, split-K products opaque in graphs, narrow 16-bit tiles), then
# host times of the operator paths and the compile suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r4
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== pytest -n 8"
timeout 300 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
echo "== op_host"
timeout 120 python3 notes/experiments/op_host.py > $OUT/op_host.log 2>&1; echo "exit $?"
echo "== compile suite"
timeout 150 python3 -m bench.suites compile --rounds 3 > $OUT/compile.log 2>&1; echo "exit $?"
grep -A16 "^call " $OUT/op_host.log
tail -7 $OUT/compile.log
