"""Experiment (session 16, run 6): plans only CUDA graphs run, ranked by device time alone.

Run 5 (graph_vs_eager.py): 148x230x4771 x @ W.T, captured, runs on staged operands under 64x32x256 without
split-K (16.1 us L2-warm), a config its tuning ranked against an eager call's host time (tuning.rank: 18 us
for one launch, 26 for split-K's two), which a graph never pays. Now such plans (Product.graph_only: staged
for the pointer kernel, or on the TMA kernel from the captured bar, only inside capture) key apart and rank by
device time. A/B: "old" ranks them as before (host floor), "new" as shipped; each with a cold tuning cache, then
graph replay over rotated operand copies as the sweep (do_bench, L2 cleared per replay), x torch.mm, 3 rounds.

    PYTHONPATH=. python3 notes/experiments/graph_only_rank.py [MxNxK:layout ...]
"""
import os
import statistics
import sys
import tempfile

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing, tuning
from bench.common import copies, rel_err
from bench.sweep import _graph, _operands

SHAPES = [(148, 230, 4771, "NT"), (107, 85, 1851, "NN"), (333, 138, 2569, "NT"), (257, 515, 1031, "NN"),
          (1088, 1088, 1088, "NN"), (768, 768, 768, "NN"), (1280, 1280, 1280, "NN"), (576, 1696, 928, "NT")]
if sys.argv[1:]:  # shapes as MxNxK:layout
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
new_rank = tuning.rank


def old_rank(product, timings, graph):
    def cost(cfg):
        ms = timings[cfg]
        host_ms = (tuning.HOST_US_PER_CALL + tuning.HOST_US_PER_LAUNCH * product.launches(cfg)) * 1e-3 if graph else 0.0
        return max(ms, host_ms), ms
    return min(timings, key=cost)


def name(cfg):
    k = cfg.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{cfg.num_stages}" + (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1
                                                                               else "") + (" tail" if k.get("TAIL") else ""))


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {n: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for n in ("torch", "old", "new")}
    graphs, picks = {"torch": _graph(lambda a, b: torch.mm(a, b, out=outs["torch"]), sets)}, {}
    for setting, rank in (("old", old_rank), ("new", new_rank)):
        os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
        tuning.forget()
        plan._compiled.clear()
        tuning.rank = rank
        call = lambda a, b, o=outs[setting]: tritonmm.matmul(a, b, out=o)  # noqa: E731
        call(*sets[0])
        graphs[setting] = _graph(call, sets)
        captured = plan.Product(*sets[0], outs[setting], "native", captured=True)
        picks[setting] = f"{captured.path}{'+staged' if captured.staged else ''}{' graph-only' if captured.graph_only else ''}" \
                         f" {name(tuning._memory[captured.tuning_key])}"
    tuning.rank = new_rank
    for g in graphs.values():
        g.replay()
    torch.cuda.synchronize()
    ref = sets[-1][0].double() @ sets[-1][1].double()
    assert all(rel_err(o, ref) < 1e-2 for o in outs.values())
    t = {n: [] for n in graphs}
    for _ in range(3):
        for n, g in graphs.items():
            t[n].append(timing.median_ms(g.replay) / len(sets) * 1e3)
    us = {n: statistics.median(v) for n, v in t.items()}
    rows.append([f"{M}x{N}x{K} {layout}", f"{us['torch']:.2f}", f"{picks['old']}: {us['old']:.2f} ({us['torch'] / us['old']:.2f})",
                 f"{picks['new']}: {us['new']:.2f} ({us['torch'] / us['new']:.2f})"])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "torch us", "old: captured pick, us (x torch)", "new: captured pick, us (x torch)"]))
