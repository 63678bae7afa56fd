#!/usr/bin/env bash
# Session 4, device run 3: GPU suite after the FP8 / tf32x3 kernel signatures, FP8 and tf32x3 benchmarks, staged-eager probe.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=$OUT/tuning-cache
echo "== pytest -n 8"
timeout 300 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -8
echo "== staged eager"; timeout 60 python3 notes/experiments/staged_eager.py 2>&1 | grep -v "^ \|^--\|Warn\|warn" | head -12
echo "== fp8"; timeout 170 python3 -m bench.suites fp8 --rounds 3 2>$OUT/fp8.err | tee $OUT/fp8.log | tail -14; tail -3 $OUT/fp8.err
