#!/usr/bin/env bash
# Session 19, device run 3: ncu on the 128x192 two-dot tile against 128x256 and 128x128 (tile_192_ncu.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD:$PWD/notes/experiments PYTHONUNBUFFERED=1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 400 $NCU --kernel-name kernel --section SpeedOfLight --section ComputeWorkloadAnalysis \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section InstructionStats \
  python3 notes/experiments/tile_192_ncu.py > $OUT/ncu.log 2>&1; echo "ncu exit $?"
grep -E "kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc|Issue Slots Busy|Shared|Stall|Warp Cycles|Active Warps|L1/TEX Hit|Bank|Pipe|Tensor" $OUT/ncu.log | cut -c1-160 | head -150
