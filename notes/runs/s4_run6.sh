#!/usr/bin/env bash
# Session 4, device run 6: GPU suite after the copy kernel and the staging rule, the fp16 sweep, bf16 unaligned rows again.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== pytest -n 8"
timeout 230 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -4
echo "== bf16 unaligned rows"
timeout 90 python3 - <<'PY' 2>&1 | tee $OUT/sweep_bf16_unaligned.log
from bench import sweep, report
shapes = [s for s in sweep.SHAPES if any(n % 8 for n in s[:3])]
rows = sweep.measure("bf16", shapes, rounds=1)
print(report.sweep_table(rows)); print("\n".join(sweep.summarize(rows)))
PY
echo "== sweep fp16"
timeout 280 python3 -m bench --preset sweep --dtype fp16 --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err | tee $OUT/sweep_fp16.log | tail -52
