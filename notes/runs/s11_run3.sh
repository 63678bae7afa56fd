#!/usr/bin/env bash
# Session 11, device run 3: the launch's pieces with linear's 2-D relaunch (no reshape and view); the
# eager path race below TMA_MIN_MACS now that both launches cost alike (eager_paths.py); configs outside
# the 16-bit space on the mid-size squares (midsize.py). Experiments only, besides the fast-launch tests.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s11r3-t timeout 100 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 4 \
  tests/test_fast_launch.py 2>&1 | tail -2
TRITONMM_CACHE_DIR=/tmp/tc-s11r3-l timeout 100 python3 notes/experiments/launch_parts.py > $OUT/launch_parts.log 2>&1
echo "launch_parts exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r3-e timeout 240 python3 notes/experiments/eager_paths.py > $OUT/eager_paths.log 2>&1
echo "eager_paths exit $?"
TRITONMM_CACHE_DIR=/tmp/tc-s11r3-m timeout 300 python3 notes/experiments/midsize.py > $OUT/midsize.log 2>&1
echo "midsize exit $?"
grep -E "^==|torch.mm|tritonmm.mm|linear|matmul|w.T" $OUT/launch_parts.log | head -16
tail -14 $OUT/eager_paths.log
cat $OUT/midsize.log | grep -v "^\[" | head -80
