#!/usr/bin/env bash
# Session 24, device run 3: eager host time before and after the relaunch trims (no planner settings in
# launch_key, new_empty_strided, linear keyed by its weight): bench.suites host at HEAD~ (build/old, made by
# `git archive 6688797 tritonmm | tar -x -C build/old`) and at the working tree, alternating processes; then
# linear_host.py at the working tree, and the relaunch tests on the GPU.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
for i in 1 2; do
  for tree in old new; do
    path=$PWD; [ $tree = old ] && path=$PWD/build/old:$PWD
    PYTHONPATH=$path TRITONMM_CACHE_DIR=/tmp/tc-s24r3-$tree timeout 200 python3 -m bench.suites host --rounds 3 \
      > $OUT/host_${tree}_$i.log 2>&1
    echo "== $tree $i (exit $?)"; tail -6 $OUT/host_${tree}_$i.log | cut -c1-200
  done
done
PYTHONPATH=$PWD TRITONMM_CACHE_DIR=/tmp/tc-s24r3-new timeout 120 python3 notes/experiments/linear_host.py \
  > $OUT/linear_host.log 2>&1
echo "linear_host exit $?"; grep -E "^==|^  [a-zA-Z.]" $OUT/linear_host.log | cut -c1-150
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -x tests/test_fast_launch.py tests/test_plan.py -k "relaunch or setting or transpose or shift" \
  > $OUT/tests.log 2>&1
echo "tests exit $?"; tail -3 $OUT/tests.log
