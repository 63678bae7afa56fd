"""Experiment (session 10): decode with 16 and 64 rows as C.T = W @ x.T ("swap AB").

x @ W.T for 16-64 rows streams the weight at 0.96-1.08x cuBLAS and 77-78% of the read bandwidth
(session 9), on 64x32x256 and 64x64x128 tiles whose 64 rows are mostly padding and whose weight tile
is 32-64 rows a step. Swapped, the weight is the product's A (4096-14336 rows, 128 or 256 a tile:
a larger contiguous stream a program, the tensor core's M side full) and x.T its B (16-64 columns).
Timed through tritonmm.mm(W, x.T) (the result is C.T; a library version would write C through
strides), tuned and pinned, against torch.mm(x, W.T) and tritonmm.mm(x, W.T), in CUDA-graph replay
with weights rotated past the L2. Hypothesis: a swapped tile passes the tuned 64-row ones by 5%+.

    PYTHONPATH=. python3 notes/experiments/decode_swap.py
    FLUSH=read PYTHONPATH=. python3 notes/experiments/decode_swap.py   # session 22: a clean L2 before each replay

FLUSH=read (session 22) times each replay after timing.median_ms's read-only flush instead of do_bench's memset,
whose dirty lines the replay would write back (notes/experiments/l2_flush.py); the read bandwidth likewise.
"""
import math
import os

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import config_space, plan, timing

FLUSH = os.environ.get("FLUSH", "memset")

L2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.randn(1 << 28, device="cuda")
read_tbps = big.numel() * 4 / timing.median_ms(lambda: big.sum(), warmup_ms=20, rep_ms=200, flush=FLUSH) / 1e9
del big
print(f"read bandwidth (torch sum of 1 GiB): {read_tbps:.2f} TB/s", flush=True)

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, GROUP_M, SPLIT_K) pinned on the swapped product.
SWAPPED = {16: [(128, 16, 128, 4, 4, 8, 1), (128, 16, 128, 4, 4, 8, 2), (128, 16, 128, 4, 4, 8, 4),
                (64, 16, 256, 4, 4, 8, 2), (128, 16, 256, 3, 4, 8, 2), (256, 16, 64, 4, 8, 8, 2)],
           64: [(128, 64, 128, 4, 4, 8, 1), (128, 64, 128, 4, 4, 8, 2), (128, 64, 64, 4, 4, 8, 4),
                (64, 64, 128, 4, 4, 8, 2), (128, 64, 64, 5, 4, 8, 2), (256, 64, 64, 4, 8, 8, 2)]}
rows = []
for M, N, K in [(16, 4096, 4096), (16, 14336, 4096), (16, 4096, 14336), (64, 4096, 4096), (64, 14336, 4096),
                (64, 4096, 14336)]:
    w_bytes = N * K * 2
    n = max(2, math.ceil(2 * L2 / w_bytes))
    ws = [torch.randn(N, K, device="cuda").bfloat16() for _ in range(n)]
    x = torch.randn(M, K, device="cuda").bfloat16()
    ref = x.double() @ ws[0].double().T

    def graph_us(call):
        call(ws[0])
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
        return timing.median_ms(g.replay, warmup_ms=20, rep_ms=200, flush=FLUSH) * 1e3 / n

    def row(name, us, base, out=None):
        err = "" if out is None else f"{((out.double() - ref).norm() / ref.norm()).item():.1e}"
        rows.append([f"{M}x{N}x{K}", name, f"{us:.1f}", f"{base / us:.2f}", f"{w_bytes / us / 1e6 / read_tbps:.0%}", err])
        print(*rows[-1], flush=True)

    def describe(cfg, path):
        kw = cfg.kwargs
        return (f"{path} {kw['BLOCK_M']}x{kw['BLOCK_N']}x{kw['BLOCK_K']} s{cfg.num_stages} w{cfg.num_warps}"
                + (f" split {kw['SPLIT_K']}" if kw.get("SPLIT_K", 1) > 1 else ""))

    base = graph_us(lambda w: torch.mm(x, w.T))
    row("torch.mm(x, W.T)", base, base)
    row(f"tritonmm.mm(x, W.T) tuned ({describe(*plan.chosen(x, ws[0].T, 'native'))})",
        graph_us(lambda w: tritonmm.mm(x, w.T)), base, tritonmm.mm(x, ws[0].T))
    tritonmm.mm(ws[0], x.T)
    row(f"swapped tuned ({describe(*plan.chosen(ws[0], x.T, 'native'))})", graph_us(lambda w: tritonmm.mm(w, x.T)),
        base, tritonmm.mm(ws[0], x.T).T)
    for t in SWAPPED[M]:
        cfg = config_space.make_config(*t)
        try:
            out = tritonmm.mm(ws[0], x.T, config=cfg).T
            row("swapped " + describe(cfg, "pinned"), graph_us(lambda w: tritonmm.mm(w, x.T, config=cfg)), base, out)
        except Exception as e:  # noqa: BLE001
            rows.append([f"{M}x{N}x{K}", str(t), type(e).__name__, "", "", str(e)[:60]])
            print(*rows[-1], flush=True)
    del ws
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "% read BW", "rel err"], disable_numparse=True))
