#!/usr/bin/env bash
# (Ran at e698a82, whose stream-K kernel and experiment scripts were reverted afterwards.)
# Session 6, device run 3: Nsight Compute on one data-parallel and one stream-K launch (1536^3 bf16, 128x256x64 s3).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache-s6r3
timeout 300 ncu --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats \
  -k regex:gemm python3 notes/experiments/stream_k_profile.py > $OUT/ncu.log 2>&1; echo "ncu exit $?"
grep -E "gemm_|Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Compute \(SM\)|Stall|Warp Cycles|Registers|Mem Busy|Max Bandwidth|L1/TEX Hit|L2 Hit|Mem Pipes" $OUT/ncu.log | head -60
