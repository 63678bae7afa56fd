#!/usr/bin/env bash
# Session 19, device run 7: the wide-read staging test on the GPU, then wide_read_staging.py again (its "as shipped"
# column now under STAGE_MIN_MACS_PER_BYTE_WIDE_READS).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s19r7 timeout 120 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_plan.py \
  -k "wide_reads or path_rule or few_tile_unaligned or graph_only" 2>&1 | tail -2
timeout 400 python3 notes/experiments/wide_read_staging.py > $OUT/wide.log 2> $OUT/wide.err; echo "exit $?"
tail -3 $OUT/wide.err | cut -c1-300
tail -11 $OUT/wide.log | cut -c1-300
