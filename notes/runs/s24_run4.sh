#!/usr/bin/env bash
# Session 24, device run 4: session 23's code (build/ab/tritonmm_old, carried) against the working tree, in one
# process, interleaved (notes/experiments/host_ab.py). build/ab was made from build/old (run 3) with:
#   cp -r build/old/tritonmm build/ab/tritonmm_old && cd build/ab/tritonmm_old && sed -i -e 's/tritonmm::/tritonmm_old::/g;
#   s/Library("tritonmm"/Library("tritonmm_old"/; s/torch\.ops\.tritonmm\b/torch.ops.tritonmm_old/g;
#   s/^\(\s*\)import tritonmm$/\1import tritonmm_old as tritonmm/' *.py
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
PYTHONPATH=$PWD/build/ab:$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tc-s24r4 timeout 400 \
  python3 notes/experiments/host_ab.py ${ROUNDS:-15} > $OUT/host_ab.log 2>&1
echo "exit $?"; cat $OUT/host_ab.log | cut -c1-200 | tail -70
