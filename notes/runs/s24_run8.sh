#!/usr/bin/env bash
# Session 24, device run 8: the relaunch and linear tests on the GPU after the review's new test (linear relaunched on
# its weight, unaligned K staged and aligned K).
PYTHONPATH=. TRITONMM_CACHE_DIR=/tmp/tc-s24r8 timeout 300 python3 -m pytest -q -n 4 tests/test_plan.py tests/test_nn.py \
  -k "weight_itself or transpose or setting or relaunch or linear" 2>&1 | tail -3
