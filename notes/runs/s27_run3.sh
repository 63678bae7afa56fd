#!/usr/bin/env bash
# Session 27, device run 3: a draw never run before (seed 11, 24 shapes, bf16), session 26's library unchanged:
# the targets on shapes not in the repo. Run 4: the same in fp16 (DTYPE=fp16 bash notes/runs/s27_run3.sh).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s27r3 timeout 560 python3 -m bench --preset sweep --dtype ${DTYPE:-bf16} --rounds 3 \
  --draw 24 --seed 11 --out $OUT/draw_${DTYPE:-bf16} 2>$OUT/draw.err > $OUT/draw.log; echo "draw exit $?"
tail -2 $OUT/draw.err | cut -c1-300
grep -E "over 24" $OUT/draw.log | cut -c1-250
