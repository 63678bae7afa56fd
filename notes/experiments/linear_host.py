"""Experiment (session 24): where tritonmm.linear's eager host time goes at 64^3.

Session 23's host suite (run 10) timed tritonmm.linear(x, w) at 24.5-24.9 us a call against F.linear's
16.2-18.0 (1.36-1.54x, over the 1.3x target), while tritonmm.matmul(x, w.T), which also builds w.T and
allocates its result, took 20.0-23.3. Question: which pieces of the linear call cost the 4.5 us over matmul?
Each piece is timed alone (wall clock over back-to-back calls, the GPU synchronized at both ends), then
cProfile over linear calls. Run 3 added the pieces of session 24's change (launch_key's b_transposed).

    PYTHONPATH=. python3 notes/experiments/linear_host.py
"""
import cProfile
import pstats

import torch
import torch.nn.functional as F

import tritonmm
from tritonmm import library, ops, plan, timing


def us(fn, n=4000):
    return timing.host_us_per_call(fn, n)


def parts(M, N, K, path, with_bias):
    x = torch.randn(M, K, device="cuda").bfloat16()
    w = torch.randn(N, K, device="cuda").bfloat16()
    bias = torch.randn(N, device="cuda").bfloat16() if with_bias else None
    wt = w.T
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    saved = plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM
    if path == "tma":
        plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = 0, 0
    try:
        tritonmm.linear(x, w, bias)
        tritonmm.mm(x, wt, out=out)
        tritonmm.matmul(x, wt)
        print(f"== {M}x{N}x{K} {path} bias={with_bias}: {plan.chosen(x, wt, 'native', bias)}")
        rows = {
            "F.linear(x, w, b)": lambda: F.linear(x, w, bias),
            "tritonmm.linear(x, w, b)": lambda: tritonmm.linear(x, w, bias),
            "torch.mm(x, w.T, out=)": lambda: torch.mm(x, wt, out=out),
            "tritonmm.mm(x, wt, out=)": lambda: tritonmm.mm(x, wt, out=out),
            "tritonmm.matmul(x, wt)": lambda: tritonmm.matmul(x, wt),
            "plan.relaunch(x, w.T, b)": lambda: plan.relaunch(x, w.T, None, bias, "none", None, True),
            "plan.relaunch(x, wt, b)": lambda: plan.relaunch(x, wt, None, bias, "none", None, True),
            "plan.relaunch(x, w, b, b_transposed)": lambda: plan.relaunch(x, w, None, bias, "none", None, True,
                                                                          b_transposed=True),
            "plan.relaunch(x, wt, out=)": lambda: plan.relaunch(x, wt, out, None, "none", None, True),
            "w.T": lambda: w.T,
            "ops._needs_op(x, w, b)": lambda: ops._needs_op(x, w, bias),
            "torch.compiler.is_compiling()": torch.compiler.is_compiling,
            "library.records_grad(x, w, b)": lambda: library.records_grad(x, w, bias),
            "plan.launch_key(x, wt, b)": lambda: plan.launch_key(x, wt, None, bias, "none", "native"),
            "plan.launch_key(x, w, b, b_transposed)": lambda: plan.launch_key(x, w, None, bias, "none", "native",
                                                                              b_transposed=True),
            "plan._new_out(x, wt)": lambda: plan._new_out(x, wt),
            "x.new_empty((M, N))": lambda: x.new_empty((M, N)),
            "torch.empty(M, N)": lambda: torch.empty(M, N, device="cuda", dtype=torch.bfloat16),
        }
        for name, fn in rows.items():
            print(f"  {name:34s} {us(fn):7.2f}")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3000):
            tritonmm.linear(x, w, bias)
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("tottime").print_stats(14)
    finally:
        plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = saved


print(f"torch {torch.__version__}")
for path in ("pointer", "tma"):
    for with_bias in (False, True):
        parts(64, 64, 64, path, with_bias)
