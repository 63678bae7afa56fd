#!/usr/bin/env bash
# Session 8, device run 6: the compiled block with and without split-K products opaque in graphs
# (compile_ab.py, one process); issue 9's suites at the session's code.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r6
echo "== compile_ab"
timeout 120 python3 notes/experiments/compile_ab.py > $OUT/compile_ab.log 2>&1; echo "exit $?"
for s in model linear host compile; do
  echo "== suite $s"
  timeout 240 python3 -m bench.suites $s --rounds 3 > $OUT/suite_$s.log 2>&1; echo "exit $?"
done
tail -9 $OUT/compile_ab.log
for s in model linear host compile; do tail -16 $OUT/suite_$s.log | cut -c1-180; done
