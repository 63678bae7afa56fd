#!/usr/bin/env bash
# Session 4, device run 7: GPU suite after the copy relaunch, unaligned bf16/fp16 rows again, the scaling claims, Triton sanitizer.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/traffic
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== pytest -n 8"
timeout 220 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -3
echo "== unaligned rows"
timeout 100 python3 - <<'PY' 2>&1 | tee $OUT/sweep_unaligned.log
from bench import sweep, report
shapes = [s for s in sweep.SHAPES if any(n % 8 for n in s[:3])]
rows = sweep.measure("bf16", shapes, rounds=1) + sweep.measure("fp16", shapes, rounds=1)
print(report.sweep_table(rows)); print("\n".join(sweep.summarize(rows)))
PY
echo "== scaling"; cp bench/results/traffic/traffic.json $OUT/traffic/
timeout 170 python3 -m bench --preset scaling --out $OUT/traffic 2>$OUT/scaling.err | tee $OUT/scaling.log | tail -40; tail -2 $OUT/scaling.err
echo "== sanitizer (Triton)"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 python3 tests/sanitize_triton.py > $OUT/san-triton.log 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY|sanitize_triton' $OUT/san-triton.log | tr '\n' ' ')"
