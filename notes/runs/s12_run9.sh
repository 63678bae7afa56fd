#!/usr/bin/env bash
# Session 12, device run 9: hints only where Triton's specialization says less (VEC 0 / DIV 1 otherwise), batch
# strides 0 for unbatched products: hint_ab.py against the kernel before the hints; the GPU suite.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r9 timeout 150 python3 notes/experiments/hint_ab.py notes/experiments/gemm_before_hints.py \
  2>&1 | tail -9 | cut -c1-250
TRITONMM_CACHE_DIR=/tmp/tc-s12r9-t timeout 400 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/ \
  > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest.log
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
