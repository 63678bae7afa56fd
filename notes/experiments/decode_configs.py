"""Decode products (x @ W.T, M = 1-64, bf16, weights rotated past the L2) in CUDA-graph replay on
the pointer kernel under pinned configs, small-M tiles with deep K and several split-K counts
(session 5): which one streams the weight fastest, against cuBLAS and the measured read bandwidth.

    PYTHONPATH=. python3 notes/experiments/decode_configs.py
"""
import math

import torch
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm

L2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.randn(1 << 28, device="cuda")  # 1 GiB: the read bandwidth
read_ms = do_bench(lambda: big.sum(), warmup=20, rep=200)
read_tbps = big.numel() * 4 / read_ms / 1e9
del big
print(f"read bandwidth (sum of 1 GiB): {read_tbps:.2f} TB/s")

SHAPES = [(1, 4096, 14336), (16, 14336, 4096), (64, 4096, 14336), (16, 4096, 4096)]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, SPLIT_K); the first is the sweep's pick
CONFIGS = [(64, 64, 128, 4, 4, s) for s in (1, 4)] + [(16, 64, 256, 4, 4, s) for s in (1, 2, 4)] \
    + [(16, 128, 128, 5, 4, s) for s in (1, 2, 4)] + [(16, 64, 128, 6, 4, 4), (16, 32, 256, 4, 2, 4)]
rows = []
for M, N, K in SHAPES:
    w_bytes = N * K * 2
    copies = max(1, math.ceil(2 * L2 / w_bytes))
    ws = [torch.randn(N, K, device="cuda").bfloat16() for _ in range(copies)]
    x = torch.randn(M, K, device="cuda").bfloat16()
    ref = x.double() @ ws[0].double().T

    def graph_us(call):
        call(ws[0])  # compile / plan outside the capture
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for w in ws:
                call(w)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for w in ws:
                call(w)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / copies

    base = graph_us(lambda w: torch.mm(x, w.T))
    rows.append([f"{M}x{N}x{K}", "torch.mm", f"{base:.1f}", "1.00", f"{w_bytes / base / 1e6 / read_tbps:.0%}", ""])
    for bm, bn, bk, st, wp, sk in CONFIGS:
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=st, num_warps=wp, SPLIT_K=sk)
        try:
            us = graph_us(lambda w: tritonmm.mm(x, w.T, config=cfg))
            err = ((tritonmm.mm(x, ws[0].T, config=cfg).double() - ref).norm() / ref.norm()).item()
            rows.append([f"{M}x{N}x{K}", f"{bm}x{bn}x{bk} s{st} w{wp} split {sk}", f"{us:.1f}", f"{base / us:.2f}",
                         f"{w_bytes / us / 1e6 / read_tbps:.0%}", f"{err:.1e}"])
        except Exception as e:  # noqa: BLE001
            rows.append([f"{M}x{N}x{K}", f"{bm}x{bn}x{bk} s{st} w{wp} split {sk}", type(e).__name__, "", "", str(e)[:50]])
        print(*rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "% read BW", "rel err"], disable_numparse=True))
