"""Experiment (session 16, run 3): 256-row tiles for tall, narrow products.

Run 2 (tune_cold.py) found no candidate within 0.9x cuBLAS at 5728x272x1120 x @ W.T (best 17.2 us against
10.6): N = 272 leaves its last 256- or 128-wide tile mostly empty, and 64-wide tiles of 128 rows make 225
tiles, 1.7 waves on 132 SMs. The 16-bit space is wide-N only (128x256, 64x256); 256x64 tiles of the same area
would make 115 tiles of 256x64 there (one wave, 15% padding). Predicted: 256x64 ahead where M is large and N
small (tall products), nowhere else. Pinned configs on the plan a CUDA graph runs (TMA kernel), timed over
operand copies rotated past the L2, against the space's best and torch.mm; 3 interleaved rounds.

    PYTHONPATH=. python3 notes/experiments/tall_tiles.py
"""
import statistics
import sys

import torch
from tabulate import tabulate

from tritonmm import config_space, plan, timing
from bench.common import copies
from bench.sweep import _operands

SHAPES = [(5728, 272, 1120, "NT"), (8144, 752, 336, "NN"), (2880, 800, 1680, "NN"), (3437, 78, 1058, "NN"),
          (3154, 196, 167, "NN"), (8192, 272, 4096, "NN"), (6000, 400, 2000, "NT"), (1536, 1536, 1536, "NN"),
          (4096, 4096, 4096, "NN")]
EXTRA = [(256, 64, 64, 4, 8), (256, 64, 64, 3, 8), (256, 64, 128, 3, 8), (256, 128, 64, 3, 8), (256, 128, 64, 4, 8)]


def name(cfg):
    k = cfg.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages}" + (
        " tail" if k.get("TAIL") else "") + (f" g{k['GROUP_M']}" if k["GROUP_M"] != 8 else "")


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
    products = [plan.Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
    ref = sets[0][0].double() @ sets[0][1].double()
    cands = products[0].candidates()
    extra = [config_space.make_config(*t) for t in EXTRA]
    cold = {}
    for cfg in cands + extra:
        try:
            products[0].run(cfg)
            cold[cfg] = timing.median_ms(lambda: [p.run(cfg) for p in products], rep_ms=25, graph=True) / len(products)
        except Exception as e:
            print("  skip", name(cfg), type(e).__name__, str(e)[:100], file=sys.stderr)
    best_space = min((c for c in cands if c in cold), key=cold.get)
    best_extra = min((c for c in extra if c in cold), key=cold.get)
    for cfg in (best_space, best_extra):
        outs[0].fill_(float("nan"))
        products[0].run(cfg)
        err = ((outs[0].double() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (name(cfg), err)
    # The two winners and torch.mm, interleaved rounds.
    fns = {"torch": lambda: [torch.mm(a, b, out=c) for (a, b), c in zip(sets, outs)],
           "space": lambda: [p.run(best_space) for p in products],
           "256-row": lambda: [p.run(best_extra) for p in products]}
    t = {k: [] for k in fns}
    for _ in range(3):
        for k, fn in fns.items():
            t[k].append(timing.median_ms(fn, rep_ms=25, graph=True) / len(sets) * 1e3)
    us = {k: statistics.median(v) for k, v in t.items()}
    rows.append([f"{M}x{N}x{K} {layout}", products[0].path, f"{us['torch']:.2f}",
                 f"{name(best_space)}: {us['space']:.2f} ({us['torch'] / us['space']:.2f})",
                 f"{name(best_extra)}: {us['256-row']:.2f} ({us['torch'] / us['256-row']:.2f})",
                 " ".join(f"{name(c).split(' g')[0]}={cold[c] * 1e3:.1f}" for c in extra if c in cold)])
    print(rows[-1], flush=True)
    del products, sets, outs
print(tabulate(rows, headers=["shape", "path", "torch us", "space's best (x torch)", "best 256-row (x torch)",
                              "each 256-row config, us"]))
