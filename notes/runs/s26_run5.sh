#!/usr/bin/env bash
# Session 26, device run 5: the fp16 sweep with copy_kernel's small-tile rule (plan.COPY_MIN_PROGRAMS_PER_SM).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s26r5-fp16 timeout 560 python3 -m bench --preset sweep --dtype fp16 --rounds 3 \
  --out $OUT/sweep_fp16 2>$OUT/sweep_fp16.err > $OUT/sweep_fp16.log; echo "sweep exit $?"
tail -2 $OUT/sweep_fp16.err | cut -c1-300
grep -E "over [0-9]+ shapes" $OUT/sweep_fp16.log | cut -c1-250
