#!/usr/bin/env bash
# Session 5, device run 4 (the seventh call): after the review fixes of the wgmma rung and the fp8 bench:
# their GPU tests; the whole ladder under memcheck and racecheck; traffic under ncu at bf16 4096^3 (the
# wgmma rung beside tritonmm and cuBLAS); the fp8 table again (its config column fixed).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== tests"
timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_cuda_reference.py tests/test_bench.py tests/test_sweep.py tests/test_plan.py 2>&1 | tail -3
echo "== ladder memcheck / racecheck"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 1 python3 -m cuda_reference.sanitize > $OUT/san-$tool.log 2>&1
  echo "$tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|kernels' $OUT/san-$tool.log | tr '\n' ' ')"
done
echo "== traffic bf16"; ncu --version | tail -1
timeout 200 python3 -m bench --traffic --dtype bf16 --shape 4096x4096x4096 --out $OUT/traffic 2>$OUT/traffic.err | tee $OUT/traffic.log | tail -24; tail -2 $OUT/traffic.err
echo "== fp8 table"
timeout 100 python3 -m bench --dtype fp8 --shape 4096x4096x4096 --shape 8192x8192x8192 --rounds 3 2>/dev/null | tail -10
