#!/usr/bin/env bash
# Session 5, run 7: the TMA kernel with descriptors made on the device: GPU suite, host times, and the
# tf32x3 / fp8 / bf16 4096^3 tables against the host-descriptor numbers of runs 3-4.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== pytest -n 8"
timeout 240 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 2>&1 | tee $OUT/pytest.log | tail -4
echo "== host suite"
timeout 90 python3 -m bench.suites host --rounds 3 2>&1 | tail -7
echo "== tables"
timeout 60 python3 -m bench --dtype tf32x3 --shape 4096x4096x4096 --rounds 1 2>/dev/null | grep -E "tritonmm|torch.mm " 
timeout 60 python3 -m bench --dtype fp8 --shape 4096x4096x4096 --rounds 1 2>/dev/null | grep -E "scaled_mm"
timeout 80 python3 -m bench --dtype bf16 --shape 4096x4096x4096 --shape 8192x8192x8192 --impl tritonmm --impl torch.mm --rounds 3 2>/dev/null | grep -E "autotuned|torch.mm "
