#!/usr/bin/env bash
# Session 26, device run 1: a staged unaligned product's parts with PDL on (unaligned_parts.py), then Nsight Compute
# on the decode products below cuBLAS, ours against cuBLAS's kernel (decode_ncu.py).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 -c "import triton, torch; print(triton.__version__, torch.__version__)"
TRITONMM_CACHE_DIR=/tmp/tc-s26r1 timeout 300 python3 notes/experiments/unaligned_parts.py > $OUT/unaligned_parts.log 2>&1
echo "parts exit $?"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
TRITONMM_CACHE_DIR=/tmp/tc-s26r1 timeout 200 $NCU --clock-control none --profile-from-start off --csv \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed \
  python3 notes/experiments/decode_ncu.py > $OUT/decode_ncu.csv 2> $OUT/decode_ncu.err
echo "ncu exit $?"; grep -v '^"' $OUT/decode_ncu.csv | head; tail -3 $OUT/decode_ncu.err
python3 - $OUT/decode_ncu.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; i_id, i_name, i_m, i_v = hdr.index("ID"), hdr.index("Kernel Name"), hdr.index("Metric Name"), hdr.index("Metric Value")
k = collections.OrderedDict()
for r in rows[1:]:
    k.setdefault((r[i_id], r[i_name][:40]), {})[r[i_m]] = r[i_v]
short = {"gpu__time_duration.sum": "us", "dram__bytes_read.sum": "dramB", "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram%",
         "lts__t_sectors_srcunit_tex_op_read.sum": "L2sect", "lts__t_sector_hit_rate.pct": "L2hit%", "launch__grid_size": "grid",
         "launch__block_size": "block", "launch__registers_per_thread": "regs", "launch__occupancy_limit_shared_mem": "occ_smem",
         "sm__warps_active.avg.pct_of_peak_sustained_active": "warps%", "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm%"}
for (i, name), m in k.items():
    print(i, name, " ".join(f"{short.get(a, a)}={b}" for a, b in m.items()))
PY
grep -v "^    " $OUT/unaligned_parts.log | tail -8; grep "^    \|kernels" $OUT/unaligned_parts.log | cut -c1-150 | head -60
