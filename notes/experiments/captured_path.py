"""Experiment (session 7): which path a captured mid-size product takes, and its graph time.

The bf16 sweep (run 4) timed 768^3 and 1024^3 in graph replay at the pointer kernel's speed
(0.76-0.80x cuBLAS) although plan.tma_path sends captured products there to the TMA kernel (session
6 had measured TMA at 0.95x at 1024^3, L2-warm). Here, with operands rotated past the L2 as the sweep
does: the path each capture ran (a spy on Product.run), and the graph time per call with the capture
rule on (CAPTURED_TMA_DIVISOR 4) and off (1), against torch.mm.

    PYTHONPATH=. python3 notes/experiments/captured_path.py
"""
import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing
from bench.common import copies

rows = []
run = plan.Product.run
for M, N, K in ((768, 768, 768), (1024, 1024, 1024), (1280, 1280, 1280), (1536, 1536, 1536)):
    n = copies(2 * (M * K + K * N))
    sets = [(torch.randn(M, K, device="cuda").bfloat16(), torch.randn(K, N, device="cuda").bfloat16()) for _ in range(n)]
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    us = {}
    for name, divisor in (("torch", None), ("capture rule", 4), ("pointer in graphs", 1)):
        if divisor:
            plan.CAPTURED_TMA_DIVISOR = divisor
        fn = (lambda a, b: torch.mm(a, b, out=out)) if divisor is None else (lambda a, b: tritonmm.mm(a, b, out=out))
        for ops in sets:
            fn(*ops)  # eager first: tunes, as the sweep does
        paths = []
        plan.Product.run = lambda self, cfg: paths.append(f"{self.path} {cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}"
                                                          f"x{cfg.kwargs['BLOCK_K']}") or run(self, cfg)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for ops in sets:
                fn(*ops)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for ops in sets:
                fn(*ops)
        plan.Product.run = run
        us[name] = (timing.median_ms(g.replay) * 1e3 / n, paths[-1] if paths else "-")
    for name, (t, path) in us.items():
        rows.append([f"{M}x{N}x{K}", name, path, f"{t:.2f}", f"{us['torch'][0] / t:.2f}"])
print(tabulate(rows, headers=["shape", "variant", "path in capture", "graph us", "x cuBLAS"]))
