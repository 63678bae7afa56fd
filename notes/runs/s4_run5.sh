#!/usr/bin/env bash
# Session 4, device run 5: the bf16 sweep, a recorded ncu CSV for the parser's test, host profile.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== ncu fixture"
timeout 60 python3 -m bench --traffic --shape 1024x1024x1024 --dtype fp32 --out /tmp/t2 > /tmp/t2.log 2>&1; echo "exit $?"
cp /tmp/t2/ncu/fp32_1024x1024x1024.csv $OUT/ncu_recorded.csv; cp /tmp/t2/ncu/fp32_1024x1024x1024.manifest.json $OUT/ncu_recorded.manifest.json
echo "== host profile"; timeout 40 python3 notes/experiments/host_profile.py 2>&1 | grep -E "==|tottime|\(" | head -24
echo "== sweep bf16"
timeout 470 python3 -m bench --preset sweep --dtype bf16 --out $OUT/sweep_bf16 2>$OUT/sweep_bf16.err | tee $OUT/sweep_bf16.log | tail -52
