#!/usr/bin/env bash
# Session 16, device run 2: the tuner's picks on the draw's slow shapes, timed L2-warm (as it tunes) and over
# rotated copies (as the sweep times), and 2176^3's eager call (notes/experiments/tune_cold.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s16r2 timeout 560 python3 notes/experiments/tune_cold.py > $OUT/tune_cold.log 2>$OUT/tune_cold.err
echo "tune_cold exit $?"; tail -5 $OUT/tune_cold.err | cut -c1-200; cat $OUT/tune_cold.log | cut -c1-250
