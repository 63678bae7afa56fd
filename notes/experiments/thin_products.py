"""Experiment (session 8): the sweep's thin products below 0.9x cuBLAS in graph replay (weights rotated
past the L2): 64x4096x14336 and 64x4096x4096 (0.89-0.90, pointer 64x64x128) and 77x4099x2049 (0.85,
unaligned rows, pointer 64x64x128 split 2), under pinned configs and forced paths.

Hypotheses: at 77 rows, 64-row tiles read the weight twice (two row tiles); 128-row tiles read it
once. On unaligned rows the loads cannot be asynchronous (cp.async takes 4-16 aligned bytes), so
the pipeline does not hide latency and more programs per SM (split-K, small tiles) should help.

    PYTHONPATH=. python3 notes/experiments/thin_products.py
    THIN_TUNED_ONLY=1 ...   # torch.mm and the tuned call only
"""
import math
import os

import torch
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm
from tritonmm import plan

L2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.randn(1 << 28, device="cuda")
read_tbps = big.numel() * 4 / do_bench(lambda: big.sum(), warmup=20, rep=200) / 1e9
del big
print(f"read bandwidth (sum of 1 GiB): {read_tbps:.2f} TB/s")

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, SPLIT_K)
POINTER = {
    (64, 4096, 14336): [(64, 64, 128, 4, 4, s) for s in (1, 2, 4)] + [(64, 32, 256, 4, 4, s) for s in (1, 2)]
    + [(64, 64, 256, 3, 4, 2), (64, 128, 128, 4, 4, 4), (64, 64, 64, 6, 4, 2), (64, 32, 128, 6, 2, 2)],
    (64, 4096, 4096): [(64, 64, 128, 4, 4, s) for s in (1, 2, 4)] + [(64, 32, 256, 4, 4, s) for s in (1, 2)]
    + [(64, 32, 128, 6, 2, 2), (64, 64, 64, 6, 4, 2)],
    (77, 4099, 2049): [(64, 64, 128, 4, 4, s) for s in (1, 2, 4)] + [(128, 64, 128, 3, 4, s) for s in (1, 2, 4)]
    + [(128, 32, 128, 4, 4, s) for s in (1, 2, 4)] + [(128, 64, 64, 4, 8, 2), (128, 32, 64, 4, 4, 4),
                                                     (128, 16, 128, 4, 4, 2), (128, 16, 64, 4, 4, 4)],
}
rows = []
for (M, N, K), cfgs in POINTER.items():
    w_bytes = N * K * 2
    n = max(1, math.ceil(2 * L2 / w_bytes))
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
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    base = graph_us(lambda w: torch.mm(x, w.T))
    shape = f"{M}x{N}x{K}"
    rows.append([shape, "torch.mm", f"{base:.1f}", "1.00", f"{w_bytes / base / 1e6 / read_tbps:.0%}", ""])

    def add(label, call):
        try:
            us = graph_us(call)
            err = ((call(ws[0]).double() - ref).norm() / ref.norm()).item()
            rows.append([shape, label, f"{us:.1f}", f"{base / us:.2f}", f"{w_bytes / us / 1e6 / read_tbps:.0%}",
                         f"{err:.1e}"])
        except Exception as e:  # noqa: BLE001
            rows.append([shape, label, type(e).__name__, "", "", str(e)[:60]])
        print(*rows[-1], flush=True)

    add("tuned", lambda w: tritonmm.mm(x, w.T))
    rows[-1][1] = f"tuned ({plan.chosen(x, ws[0].T, 'native')[1]} {plan.chosen(x, ws[0].T, 'native')[0]})"
    for bm, bn, bk, st, wp, sk in [] if os.environ.get("THIN_TUNED_ONLY") else cfgs:
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=st, num_warps=wp, SPLIT_K=sk)
        add(f"pointer {bm}x{bn}x{bk} s{st} w{wp} split {sk}", lambda w: tritonmm.mm(x, w.T, config=cfg))
    # The TMA kernel (operands staged where unaligned), tuned: the path rule's size bars lowered.
    saved = plan.FEW_TILES_PER_SM, plan.STAGE_MIN_MACS_PER_BYTE, plan.TMA_MIN_MACS
    plan.FEW_TILES_PER_SM, plan.STAGE_MIN_MACS_PER_BYTE, plan.TMA_MIN_MACS = 0, 0, 0
    try:
        add("TMA (staged where unaligned), tuned", lambda w: tritonmm.mm(x, w.T))
    finally:
        plan.FEW_TILES_PER_SM, plan.STAGE_MIN_MACS_PER_BYTE, plan.TMA_MIN_MACS = saved
    del ws
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "% read BW", "rel err"], disable_numparse=True))
