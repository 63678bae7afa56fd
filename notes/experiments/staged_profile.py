"""cProfile of eager calls of a staged product (1023x1025x1027 bf16), session 4.

    PYTHONPATH=. python3 notes/experiments/staged_profile.py
"""
import cProfile
import pstats

import torch

import tritonmm
from tritonmm import plan, timing

M, N, K = 1023, 1025, 1027
a = torch.randn(M, K, device="cuda").bfloat16()
b = torch.randn(K, N, device="cuda").bfloat16()
out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
for _ in range(20):
    tritonmm.matmul(a, b, out=out)
torch.cuda.synchronize()
print("entries", len(plan._compiled), "copy entries", len(plan._copy_launches))
print("eager us/call", timing.host_us_per_call(lambda: tritonmm.matmul(a, b, out=out), calls=500))
prof = cProfile.Profile()
prof.enable()
for _ in range(500):
    tritonmm.matmul(a, b, out=out)
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats("tottime").print_stats(12)
