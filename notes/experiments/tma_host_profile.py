"""Why an eager call relaunched on the TMA kernel costs more host time than one on the pointer
kernel (session 5): per path at 64^3 bf16 x @ W.T, the wall time per call, the kernel's own time in
CUDA-graph replay, and cProfile's top functions over back-to-back calls.

    PYTHONPATH=. python3 notes/experiments/tma_host_profile.py
"""
import cProfile
import pstats

import torch
from triton.testing import do_bench_cudagraph

import tritonmm
from tritonmm import plan, timing

a = torch.randn(64, 64, device="cuda").bfloat16()
w = torch.randn(64, 64, device="cuda").bfloat16()
out = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
fn = lambda: tritonmm.mm(a, w.T, out=out)  # noqa: E731
for path in ("pointer", "tma"):
    plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = (0, 0) if path == "tma" else (2 ** 31, 0.5)
    plan._compiled.clear()
    fn()
    assert plan.chosen(a, w.T, "native")[1] == path
    host = timing.host_us_per_call(fn)
    gpu = do_bench_cudagraph(fn, rep=200) * 1e3
    torch_host = timing.host_us_per_call(lambda: torch.mm(a, w.T, out=out))
    print(f"== {path}: {host:.1f} us a call (torch.mm {torch_host:.1f}); kernel in graph replay {gpu:.1f} us")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3000):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(12)
