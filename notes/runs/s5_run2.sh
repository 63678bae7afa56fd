#!/usr/bin/env bash
# Session 5, device run 2: tf32x3 on split operands with the tensor-core sum promoted to fp32 every PROMOTE_K
# (speed and error per promotion interval and config); the ladder's wgmma rung (tests, memcheck, 4096^3 bf16);
# the fp8 table in the main bench.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 TRITONMM_CACHE_DIR=/tmp/tuning-cache
echo "== tf32x3 tests"
timeout 100 python3 -m pytest -q -p no:cacheprovider -p no:warnings -n 8 tests/test_precision.py tests/test_plan.py -k "tf32 or traced or staged" 2>&1 | tail -3
echo "== tf32x3 promotion"
timeout 200 python3 notes/experiments/tf32x3_promote.py 2>&1 > $OUT/promote.log; tail -40 $OUT/promote.log
echo "== ladder: build, tests, wgmma memcheck"
timeout 200 python3 -m pytest -q -p no:cacheprovider -p no:warnings tests/test_cuda_reference.py 2>&1 | tee $OUT/ladder.log | tail -3
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 python3 -m cuda_reference.sanitize wgmma > $OUT/san-wgmma.log 2>&1; echo "memcheck wgmma exit $? $(grep 'ERROR SUMMARY' $OUT/san-wgmma.log)"
timeout 80 python3 - <<'PY' 2>&1 | tee $OUT/wgmma_speed.log
import torch, cuda_reference
from triton.testing import do_bench
n = 4096
for dt in (torch.bfloat16, torch.float16):
    a, b = torch.randn(n, n, device="cuda", dtype=dt), torch.randn(n, n, device="cuda", dtype=dt)
    ref = a.double() @ b.double()
    for name, f, kw in [("torch.mm", lambda: torch.mm(a, b), {}), ("cp_async", None, {}), ("wgmma", None, {})]:
        run = f or (lambda name=name: cuda_reference.matmul(a, b, name))
        ms = do_bench(run, warmup=50, rep=300)
        err = ((run().double() - ref).norm() / ref.norm()).item()
        print(f"{dt} {name:10s} {2 * n ** 3 / ms / 1e9:7.1f} TFLOP/s  err {err:.1e}")
PY
echo "== fp8 table"
timeout 150 python3 -m bench --dtype fp8 --shape 4096x4096x4096 --shape 8192x8192x8192 --rounds 3 2>$OUT/fp8.err | tee $OUT/fp8.log | tail -14; tail -2 $OUT/fp8.err
