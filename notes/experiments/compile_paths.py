"""Experiment (2026-11-22, session 3): why a compiled function calling tritonmm ran at 0.18-0.19x
eager for M >= 1024 (bench.suites compile, first run). Under torch.compile the product takes
the pointer kernel (host-side TMA descriptors do not trace through triton_op in torch 2.11-2.14)
with a cached or heuristic config. This times tritonmm.linear(x, w, b, "gelu_tanh"), bf16,
(M, 4096) x (16384, 4096).T, each way, and prints what inductor generated for the launch.
Run on the device: PYTHONPATH=. python3 notes/experiments/compile_paths.py
"""
import os

import torch
from tabulate import tabulate
from torch._inductor.utils import run_and_get_code

import tritonmm
from tritonmm import plan, timing, tuning

rows = []
for M in (1024, 4096):
    x = torch.randn(M, 4096, device="cuda").bfloat16()
    w = (torch.randn(16384, 4096, device="cuda") / 64).bfloat16()
    b = torch.randn(16384, device="cuda").bfloat16()
    fn = lambda: tritonmm.linear(x, w, b, "gelu_tanh")  # noqa: E731
    tf = lambda ms: f"{timing.tflops(M, 16384, 4096, ms):.0f}"  # noqa: E731
    with torch.no_grad():
        cfg, path = plan.chosen(x, w.T, "native", b, "gelu_tanh")
        rows.append([M, f"eager {path} (tuned)", str(cfg), tf(timing.median_ms(fn))])
        saved = plan.TMA_MIN_MACS
        plan.TMA_MIN_MACS = float("inf")
        for tune in ("0", "1"):
            os.environ["TRITONMM_AUTOTUNE"] = tune
            tuning.forget()
            cfg, path = plan.chosen(x, w.T, "native", b, "gelu_tanh")
            fn()
            rows.append([M, f"eager {path} ({'tuned' if tune == '1' else 'heuristic'})", str(cfg),
                         tf(timing.median_ms(fn))])
        plan.TMA_MIN_MACS = saved
        torch._dynamo.reset()
        compiled = torch.compile(lambda x, w, b: tritonmm.linear(x, w, b, "gelu_tanh"), fullgraph=True)
        _, code = run_and_get_code(compiled, x, w, b)
        rows.append([M, "compiled", "", tf(timing.median_ms(lambda: compiled(x, w, b)))])
        if M == 1024:
            lines = [ln for src in code for ln in src.splitlines()
                     if any(s in ln for s in ("eager_product", "gemm_kernel_0.run", "extern_kernels"))]
            print("\n".join(lines[:40]))
print(tabulate(rows, headers=["M", "how", "config", "TFLOP/s"]))
