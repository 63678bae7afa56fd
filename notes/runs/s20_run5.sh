#!/usr/bin/env bash
# Session 20, device run 5: the TMA split rule as shipped against none, on decode-like products the rule reaches inside
# CUDA graphs (the draw of run 4 took split-K 3 at 12x5120x5120) and two of run 2's again.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 560 python3 notes/experiments/tma_split_shipped.py 12x5120x5120:NT 20x5120x5120:NT 40x8192x8192:NT \
  16x8192x28672:NT 64x14336x4096:NT 128x4096x4096:NT 134x5120x13824:NT 160x5120x13824:NT \
  > $OUT/shipped.log 2> $OUT/shipped.err; echo "shipped exit $?"
tail -3 $OUT/shipped.err | cut -c1-300
grep -v "^no TMA\|^shipped" $OUT/shipped.log | cut -c1-330
