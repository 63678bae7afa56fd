#!/usr/bin/env bash
# Session 6, run 6: the fp8 sweep (never run on the device before) and issue 9's suites (linear, model,
# compile, host), not re-measured since session 4.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r6
echo "== sweep fp8"
timeout 210 python3 -m bench --preset sweep --dtype fp8 --out $OUT/sweep_fp8 2>$OUT/sweep_fp8.err > $OUT/sweep_fp8.log
echo "exit $?"; grep -E "over|min" $OUT/sweep_fp8.log | tail -3
for s in linear model compile host; do
  echo "== suite $s"
  timeout 110 python3 -m bench.suites $s --rounds 3 > $OUT/suite_$s.log 2>&1; echo "exit $?"
done
tail -60 $OUT/sweep_fp8.log | cut -c1-220
for s in linear model compile host; do tail -22 $OUT/suite_$s.log | cut -c1-200; done
