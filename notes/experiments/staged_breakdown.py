"""Experiment (session 9): where a staged product's time goes, at the unaligned shapes below 2x cuBLAS.

4095x4097x1531 runs at 1.87-1.89x torch.mm (193 us in graph replay, session 8) and 1023x1025x1027 at
1.52x. A staged product is three copies (A and B into aligned buffers, C out of one) around the TMA
kernel. Each piece timed alone in graph replay (operands rotated past the L2, as the sweep), with
tritonmm's tuned configs: the whole call, the product on operands already aligned (into an aligned
C), the A and B copies, and C's copy into the unaligned out. If C's copy is a large share, a TMA
kernel that stores C through pointers (no staged C) is the next step.

    PYTHONPATH=. python3 notes/experiments/staged_breakdown.py
"""
import math

import torch
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm
from tritonmm import plan

L2 = torch.cuda.get_device_properties(0).L2_cache_size
rows = []
for M, N, K in [(4095, 4097, 1531), (1023, 1025, 1027), (2047, 2049, 2051)]:
    n = max(1, min(8, math.ceil(2 * L2 / ((M * K + K * N + M * N) * 2))))
    As = [torch.randn(M, K, device="cuda").bfloat16() for _ in range(n)]
    Bs = [torch.randn(K, N, device="cuda").bfloat16() for _ in range(n)]
    Cs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
    aligned = [(plan._aligned_copy(a), plan._aligned_copy(b), plan._aligned_empty(M, N, a)) for a, b in zip(As, Bs)]

    def graph_us(call):
        for i in range(n):
            call(i)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(n):
                call(i)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    base = graph_us(lambda i: torch.mm(As[i], Bs[i], out=Cs[i]))
    tritonmm.mm(As[0], Bs[0])  # tunes the staged product (and its captured variant)
    tritonmm.mm(*aligned[0][:2], out=aligned[0][2])  # tunes the aligned one
    parts = {
        "torch.mm": base,
        "tritonmm.mm (staged)": graph_us(lambda i: tritonmm.mm(As[i], Bs[i], out=Cs[i])),
        "product on aligned copies": graph_us(lambda i: tritonmm.mm(aligned[i][0], aligned[i][1], out=aligned[i][2])),
        "copy A + copy B": graph_us(lambda i: (plan._aligned_copy(As[i]), plan._aligned_copy(Bs[i]))),
        # session 11: both in one launch, as a staged product now copies them (plan._stage)
        "copy A and B, one launch": graph_us(lambda i: plan._stage([plan._aligned_copy] * 2, As[i], Bs[i])),
        "copy C into out": graph_us(lambda i: plan.copy(aligned[i][2], Cs[i])),
    }
    for name, us in parts.items():
        rows.append([f"{M}x{N}x{K}", name, f"{us:.1f}", f"{us / parts['tritonmm.mm (staged)']:.2f}",
                     f"{base / us:.2f}" if name.startswith(("torch", "tritonmm")) else ""])
        print(*rows[-1], flush=True)
    del As, Bs, Cs, aligned
print(tabulate(rows, headers=["shape", "piece", "graph us", "share of staged call", "x torch.mm"],
               disable_numparse=True))
