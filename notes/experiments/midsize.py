"""Experiment (session 11): configs outside the 16-bit space on the mid-size squares, both kernel paths.

The sweep's squares from 768 to 1536 stay at 0.68-0.80x cuBLAS (session 10, runs 3-4) on the tuned
space. Here each config of the space and 14 more (2-stage 128x128 tiles that fit two programs an SM,
BLOCK_K 128 with shallower pipelines, 64x64 tiles with deep ones, 3-stage variants of the small tiles)
is pinned on each path and timed as the sweep times (CUDA-graph replay, operand copies rotated past the
L2; 3 interleaved rounds with torch.mm). Question: does any tile shape or depth the space lacks lead
by 5% or more on these shapes?

    PYTHONPATH=. python3 notes/experiments/midsize.py [deep]
"""
import os
import sys

import torch
from tabulate import tabulate

sys.path.insert(0, os.path.dirname(__file__))
from landscape import SPACE, EXTRA, cfg, graph_of, name, operands, timed  # noqa: E402

import tritonmm  # noqa: E402
from tritonmm import plan  # noqa: E402
from bench.common import copies  # noqa: E402

NEW = [cfg(128, 128, 64, 2, 8), cfg(128, 128, 64, 3, 8), cfg(128, 128, 128, 2, 8), cfg(128, 128, 128, 3, 4),
       cfg(64, 128, 128, 3, 4), cfg(128, 64, 128, 3, 4), cfg(64, 64, 64, 6, 4), cfg(64, 64, 64, 4, 4),
       cfg(64, 128, 64, 3, 4), cfg(128, 64, 64, 3, 4), cfg(64, 64, 128, 3, 4), cfg(64, 128, 64, 6, 4),
       cfg(128, 64, 64, 6, 4), cfg(64, 256, 64, 3, 4)]
SHAPES = [(768, 768, 768), (1024, 1024, 1024), (1280, 1280, 1280), (1536, 1536, 1536)]
if sys.argv[1:] == ["deep"]:  # run 7: deeper pipelines and more warps around the 6-stage winners of run 3
    SPACE, EXTRA = [cfg(64, 128, 64, 6, 4), cfg(128, 64, 64, 6, 4)], []
    NEW = [cfg(64, 128, 64, 8, 4), cfg(128, 64, 64, 8, 4), cfg(64, 128, 64, 7, 4), cfg(64, 128, 64, 6, 8),
           cfg(128, 64, 64, 6, 8), cfg(64, 128, 64, 6, 4, 1), cfg(64, 128, 64, 6, 4, 4), cfg(64, 128, 32, 10, 4),
           cfg(64, 64, 64, 8, 4), cfg(64, 128, 128, 4, 4), cfg(128, 128, 64, 7, 8)]
    SHAPES = [(768, 768, 768), (1024, 1024, 1024), (1280, 1280, 1280)]

for M, N, K in SHAPES:
    n = copies((M * K + K * N) * 2)
    sets = operands(M, N, K, "NN", n)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    graphs, per = {"torch": graph_of(lambda a, b: torch.mm(a, b, out=out), sets)}, {"torch": n}
    for path, bar in (("pointer", float("inf")), ("tma", 0)):
        plan.TMA_MIN_MACS = bar
        for c in SPACE + EXTRA + NEW:
            fn = (lambda c: lambda a, b: tritonmm.mm(a, b, out=out, config=c))(c)
            try:
                fn(*sets[0])
                graphs[f"{path} {name(c)}"] = graph_of(fn, sets)
                per[f"{path} {name(c)}"] = n
            except Exception as e:  # noqa: BLE001
                print(f"{path} {name(c)}: {type(e).__name__} {str(e)[:80]}")
    us = timed(graphs, per)
    new = {f"{p} {name(c)}" for c in NEW for p in ("pointer", "tma")}
    rows = [[k + (" *" if k in new else ""), f"{v:.2f}", f"{us['torch'] / v:.2f}"]
            for k, v in sorted(us.items(), key=lambda kv: kv[1]) if k != "torch"][:12]
    print(f"\n== {M}x{N}x{K} NN bf16, {n} copies: torch.mm {us['torch']:.2f} us (12 fastest; * not in the space)")
    print(tabulate(rows, headers=["path config", "us", "x cuBLAS"]))
    sys.stdout.flush()
    del sets, graphs
