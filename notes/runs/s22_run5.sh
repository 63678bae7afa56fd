#!/usr/bin/env bash
# Session 22, device run 5: the bf16 sweep timed with bench.common.device_ms (the L2 emptied by a read); timing and bench tests on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 90 python3 -m pytest -q tests/test_timing.py tests/test_bench.py tests/test_sweep.py 2>&1 | tail -2
TRITONMM_CACHE_DIR=/tmp/tc-s22r5-bf16 timeout 500 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err > $OUT/sweep_bf16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_bf16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_bf16.log | cut -c1-250
grep -E "x10[0-9][0-9]x|x20[0-9][0-9]x|x30[0-9][0-9]x|x40[0-9][0-9]x|4099" $OUT/sweep_bf16.log | cut -c1-220
