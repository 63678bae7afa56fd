#!/usr/bin/env bash
# Session 7, device run 5: the captured mid-size path check; decode products' eager cost after the
# host-time ranking; issue 9's suites (host, linear, model, compile), 3 rounds.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s7r5
echo "== captured path"
timeout 90 python3 notes/experiments/captured_path.py > $OUT/captured_path.log 2>&1; echo "exit $?"
echo "== decode host"
timeout 100 python3 notes/experiments/decode_host.py > $OUT/decode_host.log 2>&1; echo "exit $?"
for s in host linear model compile; do
  echo "== suite $s"
  timeout 100 python3 -m bench.suites $s --rounds 3 > $OUT/suite_$s.log 2>&1; echo "exit $?"
done
cat $OUT/captured_path.log | tail -14
grep -A12 "eager us/call" $OUT/decode_host.log | grep -E "tuned|torch" 
for s in host linear model compile; do tail -16 $OUT/suite_$s.log | cut -c1-180; done
