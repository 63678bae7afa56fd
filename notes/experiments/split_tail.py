"""Experiment (session 18, run 2): the TMA kernel's split tail against the planner's other candidates.

The draws of sessions 16-18 put most of their shapes below 0.9x cuBLAS in one class: a last wave of few tiles
(842x3072x3072 x @ W.T: 168 tiles of 128x128 for 132 SMs, 0.69; 1672x3072x8192: 168 of 128x256, 0.78;
601x8192x3072: 160, 0.76; 1536^3: 144, 0.73). With TAIL=2 (config_space.TAIL_SPLIT) the tiles of the last wave
run as slices of K over the SMs it leaves idle, their fp32 sums added up in a second launch. Predicted from the
tile counts (a slice of 1/split of a tile's time, a second pass of the workspace's bytes at L2 speed): 842x3072x3072
0.69 -> ~0.9, 601x8192x3072 0.76 -> ~0.9, 1672x3072x8192 0.78 -> ~0.85, 1536^3 0.73 -> ~0.85; nothing where the
last wave is full or no wave is (4096^3, 947x3072x8192 on 128x256).
Every candidate of the captured plan (graph replay over operand copies rotated past the L2), then the best with
and without a split tail and torch.mm in 3 interleaved rounds; the best split tail is checked against float64.

Runs at 2f2c759 (the split tail was taken out of the library after run 5; NOTES.md, session 18):

    git checkout 2f2c759 && PYTHONPATH=. python3 notes/experiments/split_tail.py
"""
import statistics
import sys

import torch
from tabulate import tabulate

from tritonmm import config_space, plan, timing
from bench.common import copies
from bench.sweep import _operands

SHAPES = [(842, 3072, 3072, "NT"), (601, 8192, 3072, "NT"), (1672, 3072, 8192, "NT"), (1536, 1536, 1536, "NN"),
          (947, 3072, 8192, "NT"), (944, 5216, 976, "NN"), (2176, 2176, 2176, "NN"), (487, 5120, 5120, "NT"),
          (3072, 3072, 3072, "NN"), (4096, 4096, 4096, "NN")]


def name(cfg):
    k = cfg.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages}" + \
        {0: "", 1: " tail", 2: " split"}[k.get("TAIL", 0)] + (f" g{k['GROUP_M']}" if k["GROUP_M"] != 8 else "")


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
    products = [plan.Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
    cands = products[0].candidates()
    cold = {}
    for cfg in cands:
        try:
            products[0].run(cfg)
            cold[cfg] = timing.median_ms(lambda: [p.run(cfg) for p in products], rep_ms=25, graph=True) / len(products)
        except Exception as e:
            print("  skip", name(cfg), type(e).__name__, str(e)[:100], file=sys.stderr)
    plain = min((c for c in cold if config_space.tail(c) != config_space.TAIL_SPLIT), key=cold.get)
    split = [c for c in cold if config_space.tail(c) == config_space.TAIL_SPLIT]
    fns = {"torch": lambda: [torch.mm(a, b, out=c) for (a, b), c in zip(sets, outs)],
           "plain": lambda: [p.run(plain) for p in products]}
    err = "-"
    if split:
        best = min(split, key=cold.get)
        ref = sets[0][0].double() @ sets[0][1].double()
        outs[0].fill_(float("nan"))
        products[0].run(best)
        err = f"{((outs[0].double() - ref).norm() / ref.norm()).item():.1e}"
        fns["split"] = lambda: [p.run(best) for p in products]
    t = {k: [] for k in fns}
    for _ in range(3):
        for k, fn in fns.items():
            t[k].append(timing.median_ms(fn, rep_ms=25, graph=True) / len(sets) * 1e3)
    us = {k: statistics.median(v) for k, v in t.items()}
    rows.append([f"{M}x{N}x{K} {layout}", f"{us['torch']:.2f}", f"{name(plain)}: {us['plain']:.2f} "
                 f"({us['torch'] / us['plain']:.2f})",
                 f"{name(best)} {products[0].split_tail(best)}: {us['split']:.2f} ({us['torch'] / us['split']:.2f})"
                 if split else "-", err,
                 " ".join(f"{name(c).replace(' split', '')}={cold[c] * 1e3:.1f}" for c in split)])
    print(rows[-1], flush=True)
    del products, sets, outs
print(tabulate(rows, headers=["shape", "torch us", "best without (x torch)", "best split tail (whole, split)",
                              "rel err", "each split tail, us"]))
