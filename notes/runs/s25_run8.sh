#!/usr/bin/env bash
# Session 25, device run 8: PDL off against on for the long products whose sweep ratios fell (pdl_ab.py, 5 rounds).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
LONG="4096x4096x4096:NN 8192x4096x14336:NT 4096x4096x4000:NN 6144x6144x6144:NN 1024x14336x4096:NT 3072x3072x3072:NN"
TRITONMM_CACHE_DIR=/tmp/tc-s25r8 ROUNDS=5 timeout 280 python3 notes/experiments/pdl_ab.py $LONG > $OUT/pdl_long_bf16.log 2>&1
echo "bf16 exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s25r8h DTYPE=float16 ROUNDS=5 timeout 200 python3 notes/experiments/pdl_ab.py \
  1024x14336x4096:NT 4096x4096x4096:NT 512x14336x4096:NT > $OUT/pdl_long_fp16.log 2>&1
echo "fp16 exit $?"
for f in bf16 fp16; do grep -v "^    " $OUT/pdl_long_$f.log | tail -9 | cut -c1-200; done
