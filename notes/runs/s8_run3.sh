#!/usr/bin/env bash
# Session 8, device run 3: the opaque operators defined on the dispatcher directly (not custom_op);
# host time of each operator path and the compiled block again, with the autograd backward profiled
# on the caller's thread; the compile suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r3
echo "== op_host"
timeout 150 python3 notes/experiments/op_host.py > $OUT/op_host.log 2>&1; echo "exit $?"
echo "== compile suite"
timeout 200 python3 -m bench.suites compile --rounds 3 > $OUT/compile.log 2>&1; echo "exit $?"
grep -A16 "^call " $OUT/op_host.log; grep "Products built" $OUT/op_host.log
tail -7 $OUT/compile.log
