#!/usr/bin/env bash
# Session 8, device run 2: eager autograd through autograd.Function (not the custom op's dispatch),
# narrow 16-bit tiles offered to products of few tiles. Host time of each operator path and the
# compiled block (op_host.py); the model suite; the thin products re-tuned; the fused linear's ceiling.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s8r2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
echo "== op_host"
timeout 150 python3 notes/experiments/op_host.py > $OUT/op_host.log 2>&1; echo "exit $?"
echo "== model suite"
timeout 240 python3 -m bench.suites model --rounds 3 > $OUT/model.log 2>&1; echo "exit $?"
echo "== linear_bound"
timeout 200 python3 notes/experiments/linear_bound.py > $OUT/linear_bound.log 2>&1; echo "exit $?"
echo "== thin_products"
THIN_TUNED_ONLY=1 timeout 120 python3 notes/experiments/thin_products.py > $OUT/thin_products.log 2>&1; echo "exit $?"
grep -A14 "^call " $OUT/op_host.log; grep "Products built" $OUT/op_host.log
tail -5 $OUT/model.log
tail -10 $OUT/linear_bound.log
grep -E "tuned|torch.mm" $OUT/thin_products.log | tail -6
