"""Why a staged product's eager call took 3x its graph replay in run 1 of session 4 (H100).

    PYTHONPATH=. python3 notes/experiments/staged_eager.py

Times the host-side pieces of one eager call of 3000x3001x2999 bf16 (A, B and C staged for
TMA) with the GPU idle, and profiles 10 calls with torch.profiler.
"""
import time

import torch

import tritonmm
from tritonmm import plan, tuning

M, N, K = 3000, 3001, 2999
a = torch.randn(M, K, device="cuda").bfloat16()
b = torch.randn(K, N, device="cuda").bfloat16()
out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
tritonmm.matmul(a, b, out=out)
torch.cuda.synchronize()


def host(fn, n=20):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    host_us = (time.perf_counter() - t) / n * 1e6
    torch.cuda.synchronize()
    return host_us, (time.perf_counter() - t) / n * 1e6


print("matmul: host us, host+gpu us per call", host(lambda: tritonmm.matmul(a, b, out=out)))
# The sweep's eager column: wall time of back-to-back calls rotating through 3 operand copies.
import itertools  # noqa: E402

from tritonmm import timing  # noqa: E402
sets = [(torch.randn(M, K, device="cuda").bfloat16(), torch.randn(K, N, device="cuda").bfloat16()) for _ in range(3)]
cycle = itertools.cycle(sets)
print("sweep-style eager us/call", timing.host_us_per_call(lambda: tritonmm.matmul(*next(cycle), out=out), calls=300))
print("same, one operand set", timing.host_us_per_call(lambda: tritonmm.matmul(a, b, out=out), calls=300))
print("torch.mm", timing.host_us_per_call(lambda: torch.mm(a, b, out=out), calls=300))
print("Product()", host(lambda: plan.Product(a, b, out, "native")))
launch = plan.Product(a, b, out, "native")
cfg = tuning.choose_config(launch)
print("choose_config", host(lambda: tuning.choose_config(launch)))
print("run", host(lambda: launch.run(cfg)))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        tritonmm.matmul(a, b, out=out)
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
