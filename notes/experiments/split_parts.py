"""Experiment (session 21, run 1): what split-K's second pass costs in graph replay, before building an
in-kernel fix-up (the last unit of each tile adds the others' partial sums: no second launch, no re-read).

Decode and few-tile products below cuBLAS in session 20's draw (x torch.mm, graph replay): 12x5120x5120 x @ W.T
0.895 (TMA 64x128x64, split 3), 55x2048x6144 x @ W.T 0.88 (pointer, unsplit), 784x432x2448 0.85 (91 tiles of
64x64, unsplit: its workspace would be 45% of the operands' bytes, over the TMA split rule's 10%).

Per shape (bf16, graph replay over operand copies rotated past the L2, 3 interleaved rounds): torch.mm, the
tuned call, and for each split config (the tuned one, and pinned TMA variants) the whole call, its first launch
alone (the units' partial sums: the bound an in-kernel fix-up approaches) and its second alone. Also cuBLAS's
kernels and their device times (torch.profiler, one eager call).

    PYTHONPATH=. python3 notes/experiments/split_parts.py [MxNxK:layout ...]
"""
import os
import sys
import tempfile

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import config_space, plan
from bench.common import config_text, copies, interleaved_times, kernels_run, replay_errors
from bench.sweep import _graph, _operands

SHAPES = [(12, 5120, 5120, "NT"), (55, 2048, 6144, "NT"), (784, 432, 2448, "NN"), (16, 14336, 4096, "NT"),
          (496, 464, 2416, "NT")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
# Pinned TMA variants: (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps, SPLIT_K)
PINNED = [(64, 64, 128, 4, 4, 1), (64, 64, 128, 4, 4, 2), (64, 64, 128, 4, 4, 3), (64, 128, 64, 6, 4, 3),
          (64, 64, 128, 4, 4, 4), (64, 128, 128, 4, 4, 2)]
os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()


table = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {"torch": torch.empty(M, N, dtype=torch.bfloat16, device="cuda")}
    outs["tuned"] = torch.empty_like(outs["torch"])
    calls = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]),
             "tuned": lambda a, b: tritonmm.matmul(a, b, out=outs["tuned"])}
    calls["tuned"](*sets[0])
    tuned, path = plan.chosen(*sets[0], "native", captured=True)
    cfgs = {f"tuned {path} {config_text(tuned)}": tuned}
    for t in PINNED:
        cfg = config_space.make_config(*t[:5], SPLIT_K=t[5])
        cfgs.setdefault(f"pinned {config_text(cfg)}", cfg)
    graphs = {n: _graph(c, sets) for n, c in calls.items()}
    keep = []
    for label, cfg in cfgs.items():
        out = torch.empty_like(outs["torch"])
        products = [plan.Product(a, b, out, "native", captured=True) for a, b in sets]
        if label.startswith("pinned") and products[0].path != "tma":
            continue
        steps = [p.steps(cfg) for p in products]
        keep.append(steps)  # the graphs' workspaces and descriptors live as long as the graphs
        graphs[label] = _graph(lambda i: [plan.launch_step(s) for s in steps[i]], [(i,) for i in range(len(sets))])
        outs[label] = out
        if len(steps[0]) == 2:
            for part, j in (("first", 0), ("second", 1)):
                graphs[f"{label} [{part}]"] = _graph(lambda i, j=j: plan.launch_step(steps[i][j]),
                                                     [(i,) for i in range(len(sets))])
    errs = replay_errors({k: g for k, g in graphs.items() if k in outs}, outs, sets)
    times = interleaved_times({k: g.replay for k, g in graphs.items()}, rounds=3)
    med = {k: sorted(v)[1] * 1e3 / len(sets) for k, v in times.items()}
    shape = f"{M}x{N}x{K} {layout} ({len(sets)} copies)"
    print(shape, "cuBLAS:", kernels_run(lambda: torch.mm(*sets[0], out=outs["torch"])), flush=True)
    for k, us in med.items():
        row = [shape, k, f"{us:.2f}", f"{med['torch'] / us:.2f}", f"{errs[k]:.1e}" if k in errs else "-"]
        table.append(row)
        print(" | ".join(row), flush=True)
print(tabulate(table, headers=["shape", "what", "us", "x torch.mm", "rel err"]))
