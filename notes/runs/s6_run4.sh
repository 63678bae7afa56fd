#!/usr/bin/env bash
# (Ran at e698a82, whose stream-K kernel and experiment scripts were reverted afterwards.)
# Session 6, device run 4: Nsight Compute source counters (stall sampling) on the stream-K launch of run 3.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r4
timeout 300 ncu --section SourceCounters --section WarpStateStats --print-details all --import-source yes \
  -k regex:stream_k python3 notes/experiments/stream_k_profile.py > $OUT/ncu.log 2>&1; echo "ncu exit $?"
timeout 200 ncu --section SourceCounters -k regex:stream_k --page source --csv --print-source sass \
  python3 notes/experiments/stream_k_profile.py > $OUT/sass.csv 2>&1; echo "ncu sass exit $?"
sed -n '/Section: Warp State/,$p' $OUT/ncu.log | grep -vE "^\s*$" | head -80
