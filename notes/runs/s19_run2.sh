#!/usr/bin/env bash
# Session 19, device run 2: the 128x192 tile's code on Triton 3.6 (notes/experiments/tile_192_ir.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD:$PWD/notes/experiments PYTHONUNBUFFERED=1
timeout 300 python3 notes/experiments/tile_192_ir.py 2>&1 | tee $OUT/ir.log | cut -c1-400
tar czf $OUT/ttgir.tgz /tmp/ttgir_*.mlir 2>/dev/null
