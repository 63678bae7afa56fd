#!/usr/bin/env bash
# Session 27, device run 2: why the residue-class kernel ran 77x4099x2049 in 23 us (run 1): the kernel alone on
# variants that each take one difference away (residue_classes.py, ANATOMY=1).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
ANATOMY=1 TRITONMM_CACHE_DIR=/tmp/tc-s27r2 timeout 400 python3 notes/experiments/residue_classes.py > $OUT/anatomy.log 2>&1
echo "exit $?"
tail -8 $OUT/anatomy.log
