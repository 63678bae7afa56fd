"""Experiment (session 24): eager host time of two versions of tritonmm in one process, interleaved.

Run 3 timed bench.suites host at session 23's code and at this session's in alternating processes: the
same code's linear / F.linear ratio moved by 0.1-0.3 between processes (1.03-1.31 for either version),
more than the change could. Here the old tree is imported under another name (tritonmm_old, its operator
namespace renamed; made by notes/runs/s24_run4.sh) beside the new one, and each round times every call
back to back (timing.host_us_per_call), in turn; medians over rounds. torch's F.linear is listed twice:
the spread between its two columns is this host's noise.

    PYTHONPATH=build/ab:. python3 notes/experiments/host_ab.py [rounds]
"""
import statistics
import sys

import torch
import torch.nn.functional as F

import tritonmm
import tritonmm_old
from tritonmm import timing

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def case(M, N, K, path, with_bias):
    x = torch.randn(M, K, device="cuda").bfloat16()
    w = torch.randn(N, K, device="cuda").bfloat16()
    bias = torch.randn(N, device="cuda").bfloat16() if with_bias else None
    wt = w.T
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    fns = {"torch.mm(out=)": lambda: torch.mm(x, wt, out=out),
           "F.linear": lambda: F.linear(x, w, bias),
           "F.linear again": lambda: F.linear(x, w, bias)}
    for name, lib in (("old", tritonmm_old), ("new", tritonmm)):
        fns[f"{name} mm(out=)"] = lambda lib=lib: lib.mm(x, wt, out=out)
        fns[f"{name} matmul"] = lambda lib=lib: lib.matmul(x, wt)
        fns[f"{name} linear"] = lambda lib=lib: lib.linear(x, w, bias)
    saved = [(p, p.TMA_MIN_MACS, p.FEW_TILES_PER_SM) for p in (tritonmm.plan, tritonmm_old.plan)]
    for p, _, _ in saved:
        if path == "tma":
            p.TMA_MIN_MACS, p.FEW_TILES_PER_SM = 0, 0
    try:
        paths = {name: lib.plan.chosen(x, wt, "native", bias)[1] for name, lib in (("old", tritonmm_old), ("new", tritonmm))}
        us = {name: [] for name in fns}
        for _ in range(ROUNDS):
            for name, fn in fns.items():
                us[name].append(timing.host_us_per_call(fn, 1500))
    finally:
        for p, macs, few in saved:
            p.TMA_MIN_MACS, p.FEW_TILES_PER_SM = macs, few
    med = {name: statistics.median(t) for name, t in us.items()}
    print(f"== {M}x{N}x{K} {path} bias={with_bias} (paths {paths}); us a call, median of {ROUNDS} rounds")
    for name, t in med.items():
        print(f"  {name:18s} {t:6.2f}")
    print(f"  ratios: old linear/F {med['old linear'] / med['F.linear']:.2f}, new {med['new linear'] / med['F.linear']:.2f};"
          f" old mm/torch {med['old mm(out=)'] / med['torch.mm(out=)']:.2f}, new {med['new mm(out=)'] / med['torch.mm(out=)']:.2f};"
          f" F again/F {med['F.linear again'] / med['F.linear']:.2f}")


print(f"torch {torch.__version__}")
for path in ("pointer", "tma"):
    for with_bias in (False, True):
        case(64, 64, 64, path, with_bias)
case(16, 4096, 4096, "pointer", False)
