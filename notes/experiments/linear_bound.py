"""Experiment (session 8): how far the fused linear can lead torch's two kernels, per shape.

Issue 9 asks tritonmm.linear(x, W, b, "gelu_tanh") for at least 1.1x F.gelu(F.linear(x, W, b)) at M >=
1024 on (N, K) = (14336, 4096) and (4096, 14336), bf16. torch runs the product with the bias in
cuBLASLt's epilogue, then a GELU pass over C. Fusing removes only that pass: at cuBLAS's speed on the
product, the ceiling is (linear + gelu) / linear. Here each piece is timed alone (inputs rotated past
the L2, interleaved rounds), with tritonmm's plain product (no epilogue) and its fused call.

    PYTHONPATH=. python3 notes/experiments/linear_bound.py
"""
import itertools
import statistics

import torch
import torch.nn.functional as F
from tabulate import tabulate

import tritonmm
from bench.common import copies, interleaved_times

rows = []
with torch.no_grad():
    for (N, K), M in itertools.product(((14336, 4096), (4096, 14336)), (1024, 2048, 4096, 8192)):
        n = copies((M * K + N * K) * 2)
        sets = [(torch.randn(M, K, device="cuda").bfloat16(), (torch.randn(N, K, device="cuda") / K ** 0.5).bfloat16(),
                 torch.randn(N, device="cuda").bfloat16()) for _ in range(n)]
        ys = [torch.randn(M, N, device="cuda").bfloat16() for _ in range(copies(M * N * 2))]
        cyc = {k: itertools.cycle(sets) for k in ("lin", "both", "tm", "tmplain")}
        cy = itertools.cycle(ys)
        t = interleaved_times({
            "F.linear": lambda: F.linear(*next(cyc["lin"])),
            "F.gelu": lambda: F.gelu(next(cy), approximate="tanh"),
            "torch": lambda: F.gelu(F.linear(*next(cyc["both"])), approximate="tanh"),
            "tritonmm plain": lambda: (lambda x, w, b: tritonmm.matmul(x, w.T))(*next(cyc["tmplain"])),
            "tritonmm fused": lambda: tritonmm.linear(*next(cyc["tm"]), "gelu_tanh"),
        }, 3)
        ms = {k: statistics.median(v) for k, v in t.items()}
        rows.append([f"{M}x{N}x{K}", *(f"{ms[k] * 1e3:.1f}" for k in ms),
                     f"{(ms['F.linear'] + ms['F.gelu']) / ms['F.linear']:.3f}",
                     f"{ms['F.linear'] / ms['tritonmm plain']:.3f}", f"{ms['torch'] / ms['tritonmm fused']:.3f}"])
        print(*rows[-1], flush=True)
        del sets, ys
print(tabulate(rows, headers=["MxNxK", "F.linear us", "F.gelu us", "torch us", "tritonmm plain us", "tritonmm fused us",
                              "ceiling at parity", "plain x F.linear", "fused x torch"], disable_numparse=True))
