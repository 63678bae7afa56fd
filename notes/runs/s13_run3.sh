#!/usr/bin/env bash
# Session 13, device run 3: stream-K's parts in CUDA-graph replay, then Nsight Compute on one launch of each.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
TRITONMM_CACHE_DIR=/tmp/tc-s13r3 timeout 200 python3 notes/experiments/stream_k_parts.py > $OUT/parts.log 2>&1
echo "parts exit $?"; tail -26 $OUT/parts.log | cut -c1-200
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
TRITONMM_CACHE_DIR=/tmp/tc-s13r3 timeout 240 $NCU --clock-control none --csv \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__cycles_active.avg \
  -k regex:"stream_k|gemm_tma" python3 notes/experiments/stream_k_parts.py ncu > $OUT/ncu.csv 2> $OUT/ncu.err
echo "ncu exit $?"; grep -E '"(gpu__time|dram__bytes|lts__t_sector_hit|sm__throughput)' $OUT/ncu.csv | awk -F'","' '{print $5, $(NF-2), $NF}' | cut -c1-120 | head -70
