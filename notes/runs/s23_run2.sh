#!/usr/bin/env bash
# Session 23, device run 2: the span rule for TMA split-K against session 20's fill rule, each tuned cold
# (tma_split_shipped.py RULE=span); the new tests of the shift and the split rule on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_plan.py -k "move_back or split_rule or offers_tma_split" \
  > $OUT/tests.log 2>&1; echo "tests exit $?"; tail -2 $OUT/tests.log
RULE=span timeout 440 python3 notes/experiments/tma_split_shipped.py > $OUT/span.log 2>&1; echo "span exit $?"
grep -v "^fill rule\|^shipped" $OUT/span.log | tail -14 | cut -c1-230
