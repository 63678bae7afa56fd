#!/usr/bin/env bash
# Session 26, device run 2: copy_kernel's small tile where 64x64 tiles leave SMs few programs, and the copy letting
# the next kernel's programs be placed as it starts, on staged products (settings_ab.py's default variants).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s26r2 timeout 540 python3 notes/experiments/settings_ab.py "$@" > $OUT/settings_ab.log 2>&1
echo "exit $?"; grep -v "^    " $OUT/settings_ab.log | tail -14; grep "rounds" $OUT/settings_ab.log | cut -c1-200
