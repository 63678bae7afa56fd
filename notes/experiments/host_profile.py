"""Where an eager call's host time goes: cProfile over back-to-back calls (session 4).

    PYTHONPATH=. python3 notes/experiments/host_profile.py
"""
import cProfile
import pstats

import torch

import tritonmm

a = torch.randn(64, 64, device="cuda").bfloat16()
w = torch.randn(64, 64, device="cuda").bfloat16()
out = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
for name, fn in (("mm", lambda: tritonmm.mm(a, w.T, out=out)), ("linear", lambda: tritonmm.linear(a, w))):
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(2000):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    print(f"== {name}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(8)
