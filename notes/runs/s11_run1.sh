#!/usr/bin/env bash
# Session 11, device run 1 (experiments only): where an eager relaunch's host time goes on each kernel
# path (notes/experiments/launch_parts.py), and Triton 3.6's launcher sources, which the direct TMA
# launch must match.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/triton36
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
T=$(python3 -c "import triton, os; print(os.path.dirname(triton.__file__))")
cp $T/backends/nvidia/driver.py $OUT/triton36/nvidia_driver.py
cp $T/backends/driver.py $OUT/triton36/backends_driver.py
cp $T/compiler/compiler.py $OUT/triton36/compiler.py
cp $T/runtime/jit.py $OUT/triton36/jit.py
cp $T/tools/tensor_descriptor.py $OUT/triton36/tensor_descriptor.py
ls $T/backends/nvidia/ > $OUT/triton36/ls_nvidia.txt
TRITONMM_CACHE_DIR=/tmp/tc-s11r1 timeout 300 python3 notes/experiments/launch_parts.py > $OUT/launch_parts.log 2>&1
echo "launch_parts exit $?"
grep -v "^ *[0-9]" $OUT/launch_parts.log | head -80
