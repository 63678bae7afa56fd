#!/usr/bin/env bash
# Session 4, device run 4: GPU suite, host times, FP8 against torch._scaled_mm, traffic under ncu.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=$OUT/tuning-cache
echo "== pytest -n 8"
timeout 250 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -6
echo "== host"; timeout 60 python3 -m bench.suites host --rounds 3 2>&1 | tail -7
echo "== fp8"; timeout 120 python3 -m bench.suites fp8 --rounds 1 2>$OUT/fp8.err | tee $OUT/fp8.log | tail -16; tail -2 $OUT/fp8.err
echo "== traffic"; ncu --version | tail -1
timeout 200 python3 -m bench --traffic --out "$OUT/traffic" 2>"$OUT/traffic.err" | tee "$OUT/traffic.log" | tail -45; tail -3 "$OUT/traffic.err"
