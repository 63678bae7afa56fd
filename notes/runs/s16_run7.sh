#!/usr/bin/env bash
# Session 16, device run 7: run 6's A/B on the shapes its time did not reach (mid-size products on the TMA kernel
# only inside capture).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 200 python3 notes/experiments/graph_only_rank.py 1088x1088x1088:NN 768x768x768:NN 1280x1280x1280:NN \
  576x1696x928:NT > $OUT/graph_only_rank.log 2>&1; echo "graph_only_rank exit $?"; tail -8 $OUT/graph_only_rank.log | cut -c1-250
