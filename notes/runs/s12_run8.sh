#!/usr/bin/env bash
# Session 12, device run 8: hint_ab.py, the pointer kernel before and after the alignment hints on the
# products run 6's sweep found slower.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
git show 0ad77a0~1:tritonmm/kernels/gemm.py 2>/dev/null | sed 's/from .tiles import/from tritonmm.kernels.tiles import/' > /tmp/gemm_old.py
[ -s /tmp/gemm_old.py ] || cp notes/experiments/gemm_before_hints.py /tmp/gemm_old.py
TRITONMM_CACHE_DIR=/tmp/tc-s12r8 timeout 300 python3 notes/experiments/hint_ab.py /tmp/gemm_old.py 2>&1 | tail -12 | cut -c1-250
