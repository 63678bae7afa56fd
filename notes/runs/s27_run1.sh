#!/usr/bin/env bash
# Session 27, device run 1: a weight with unaligned rows read through TMA by residue classes of its rows, unstaged
# (residue_classes.py), against torch.mm and tritonmm as shipped.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -c "import triton, torch; print(triton.__version__, torch.__version__, torch.cuda.get_device_name())"
TRITONMM_CACHE_DIR=/tmp/tc-s27r1 timeout 540 python3 notes/experiments/residue_classes.py > $OUT/residue_classes.log 2>&1
echo "exit $?"
grep -v "^  (" $OUT/residue_classes.log | tail -12
