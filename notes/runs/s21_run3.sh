#!/usr/bin/env bash
# Session 21, device run 3 (after the plain cdiv, copy()'s cache lookup first and new_empty_strided buffers): the
# staged relaunch profiled again (staged_profile.py; run 2 profiled it before those changes), then
# eager_staging.py over 13 shapes.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 100 python3 notes/experiments/staged_profile.py 2>&1 | grep -v "^$" | head -45
timeout 420 python3 notes/experiments/eager_staging.py 2>&1 | tail -16
