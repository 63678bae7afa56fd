"""Experiment (session 25, run 10): do PDL launches run under compute-sanitizer?

Run 9's memcheck over tests/sanitize_triton.py (695 products; 240 s in session 23 without PDL) printed nothing in
300 s with PDL on. This times a few products of each path, eagerly, PDL on or off (argv[1]: on / off), printing
as it goes, so a hang shows where it is.

    compute-sanitizer --tool memcheck python3 notes/experiments/pdl_sanitizer.py on
"""
import sys
import time

import torch

import tritonmm
from tritonmm import config_space, plan

plan.PDL = sys.argv[1:] == ["on"]
t0 = time.time()
a = torch.randn(300, 256, device="cuda").half()
w = torch.randn(256, 256, device="cuda").half()
odd = torch.randn(301, 257, device="cuda").half()
cases = {"pointer": dict(config=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)),
         "pointer split-K": dict(config=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, SPLIT_K=2)),
         "one row": dict(config=dict(BLOCK_M=1, BLOCK_N=16, BLOCK_K=64))}
for name, kw in cases.items():
    x = a[:1] if name == "one row" else a
    for _ in range(3):
        y = tritonmm.mm(x, w, **kw)
    torch.cuda.synchronize()
    print(f"{name}: ok at {time.time() - t0:.1f} s, PDL {plan.PDL}", flush=True)
for name, setting in (("tma", "TMA_MIN_MACS"), ("tma staged", "STAGE_MIN_MACS_PER_BYTE")):
    for s in ("TMA_MIN_MACS", "FEW_TILES_PER_SM", "STAGE_MIN_MACS_PER_BYTE", "STAGE_EAGER_MIN_MACS"):
        setattr(plan, s, 0)
    x, b = (a, w) if name == "tma" else (odd, odd.T[:, :200])
    for _ in range(3):
        y = tritonmm.mm(x, b, config=config_space.make_config(64, 64, 64, 3, 4))
    torch.cuda.synchronize()
    print(f"{name}: ok at {time.time() - t0:.1f} s", flush=True)
