#!/usr/bin/env bash
# Session 25, device run 2: programmatic dependent launch (plan.PDL) off and on, graph replay, interleaved
# (notes/experiments/pdl_ab.py); then the tests that launch kernels, with PDL on everywhere.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -c "import triton, triton.language.extra.cuda as c; print(triton.__version__, c.gdc_wait)"
TRITONMM_CACHE_DIR=/tmp/tc-s25r2 timeout 420 python3 notes/experiments/pdl_ab.py "$@" > $OUT/pdl_ab.log 2>&1
echo "exit $?"; grep -v "^    " $OUT/pdl_ab.log | tail -26
