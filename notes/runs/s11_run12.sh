#!/usr/bin/env bash
# Session 11, device run 12: after the descriptor expansion moved inside the direct launch's try (040bfb0):
# the fast-launch and planner tests.
export PYTHONPATH=$PWD; TRITONMM_CACHE_DIR=/tmp/tc-s11r12 timeout 200 python3 -m pytest -q -p no:cacheprovider \
  -p no:warnings -n 8 tests/test_fast_launch.py tests/test_plan.py 2>&1 | tail -2
