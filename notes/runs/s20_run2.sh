#!/usr/bin/env bash
# Session 20, device run 2: split-K on the TMA kernel, shipped as a tuner variant: its GPU tests, the sanitizer's
# TMA split block under memcheck, and the rule as shipped against no TMA split (notes/experiments/tma_split_shipped.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -n 8 tests/test_plan.py tests/test_config_space.py > $OUT/pytest_plan.log 2>&1; echo "pytest exit $?"
tail -3 $OUT/pytest_plan.log
timeout 360 python3 notes/experiments/tma_split_shipped.py > $OUT/shipped.log 2> $OUT/shipped.err; echo "shipped exit $?"
tail -3 $OUT/shipped.err | cut -c1-300
grep -v "^no TMA\|^shipped" $OUT/shipped.log | cut -c1-330
