#!/usr/bin/env bash
# Session 9, device run 2: the one-row kernel (kernels/gemv.py) in the library: the GPU suite, then
# decode products through tritonmm.mm (tuned and pinned) against cuBLAS, and thin tiles for 16-64 rows.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== pytest -n 8"
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r2t timeout 280 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 \
  | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -20
TRITONMM_CACHE_DIR=/tmp/tuning-cache-s9r2 timeout 250 python3 notes/experiments/one_row.py > $OUT/one_row.log 2>&1
echo "one_row exit $?"; head -1 $OUT/one_row.log; sed -n '/^shape/,$p' $OUT/one_row.log; tail -3 $OUT/one_row.log | grep -i error
