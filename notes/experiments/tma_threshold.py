"""Experiment (2026-11-22, session 3): where the TMA kernel starts to beat the pointer kernel,
now that both relaunch without Triton's argument binding (tritonmm/fast_launch.py).

Session 2 set plan.TMA_MIN_MACS = 2**35 from host time: the TMA path then rebuilt three
descriptors and bound every argument each call (87-125 us at 64^3 against 48-56). Here each
path is forced (TMA_MIN_MACS 0 or infinity), tuned, and timed eagerly (do_bench medians of
the whole call, host time included) and its host time per call measured at 64^3.
Run on the device: PYTHONPATH=. python3 notes/experiments/tma_threshold.py
"""
import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing, tuning

SHAPES = [(m, n, n) for m in (16, 128, 512, 1024, 2048) for n in (1024, 4096)] + \
         [(s, s, s) for s in (512, 1024, 1536, 2048, 3072)] + [(3000, 3008, 3000), (2048, 2048, 1000), (4096, 4096, 4000)]
saved = plan.TMA_MIN_MACS
rows = []
for layout in ("NT", "NN"):
    for M, N, K in SHAPES:
        a = torch.randn(M, K, device="cuda").bfloat16()
        b = torch.randn(N, K, device="cuda").bfloat16().T if layout == "NT" else torch.randn(K, N, device="cuda").bfloat16()
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        ms = {}
        for path, bar in (("pointer", float("inf")), ("tma", 0)):
            plan.TMA_MIN_MACS = bar
            tritonmm.mm(a, b, out=out)  # tunes this path's bucket
            ms[path] = timing.median_ms(lambda: tritonmm.mm(a, b, out=out))
        torch_ms = timing.median_ms(lambda: torch.mm(a, b, out=out))
        rows.append([layout, f"{M}x{N}x{K}", f"{M * N * K:.2e}", f"{timing.tflops(M, N, K, torch_ms):.0f}",
                     f"{timing.tflops(M, N, K, ms['pointer']):.0f}", f"{timing.tflops(M, N, K, ms['tma']):.0f}",
                     f"{ms['pointer'] / ms['tma']:.2f}"])
a = torch.randn(64, 64, device="cuda").bfloat16()
out = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
for path, bar in (("pointer", float("inf")), ("tma", 0)):
    plan.TMA_MIN_MACS = bar
    print(f"host us per call at 64^3, {path}: {timing.host_us_per_call(lambda: tritonmm.mm(a, a, out=out)):.1f}")
print(f"torch.mm: {timing.host_us_per_call(lambda: torch.mm(a, a, out=out)):.1f}")
plan.TMA_MIN_MACS = saved
print(tabulate(rows, headers=["layout", "shape", "MACs", "torch TFLOP/s", "pointer TFLOP/s", "tma TFLOP/s",
                              "tma speedup"], disable_numparse=True))
