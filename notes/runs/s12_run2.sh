#!/usr/bin/env bash
# Session 12, device run 2: the pointer kernel's alignment hints (VEC_*, DIV_*). Planner and ops tests (the
# new per-alignment test among them); row_alignment.py (hints on/off, against staging); the draw of run 1
# again (bf16, seed 1), so each drawn shape compares with run 1.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s12r2-t timeout 150 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 \
  tests/test_plan.py tests/test_ops.py 2>&1 | tee $OUT/pytest.log | tail -2
grep -E "^(FAILED|ERROR)" $OUT/pytest.log | head -10
TRITONMM_CACHE_DIR=/tmp/tc-s12r2-x timeout 200 python3 notes/experiments/row_alignment.py > $OUT/row_alignment.log 2>&1
echo "row_alignment exit $?"; tail -14 $OUT/row_alignment.log | cut -c1-250
TRITONMM_CACHE_DIR=/tmp/tc-s12r2-bf16 timeout 330 python3 -m bench --preset sweep --dtype bf16 --rounds 3 \
  --draw 40 --seed 1 --out $OUT/draw_bf16 2>$OUT/draw_bf16.err > $OUT/draw_bf16.log; echo "bf16 exit $?"
tail -2 $OUT/draw_bf16.err | cut -c1-300
grep -E "^bf16 " $OUT/draw_bf16.log | cut -c1-200; grep -E "over 40" $OUT/draw_bf16.log
