"""Experiment (session 17, run 1): staging 4-byte reads for the pointer kernel, and where a staged product's
time goes.

Session 15 staged 2-byte reads only (plan.POINTER_STAGE_MAX_LOAD_BYTES = 2): with 4-byte reads staging went both
ways (130x520x6002 0.65 / 0.81, 48x4100x2050 0.90 / 0.70), and graph-only plans were then ranked against an
eager call's host floor, which session 16 removed. Session 16's draw (seed 4) had 97x70x786 x @ W.T at 0.31x
and 93x529x6074 x @ W.T at 0.59x, both 4-byte reads. Here, per shape (bf16, graph replay over operand copies
rotated past the L2, as the sweep; L2 cleared per replay; cold tuning cache per setting; 3 interleaved rounds,
x torch.mm): "2" as shipped, "4" with 4-byte reads staged too. For each tritonmm graph, torch.profiler's
device time per kernel name (us per product), to show what the copies cost against the GEMM.

    PYTHONPATH=. [WIDTHS=2,4] python3 notes/experiments/stage_breakdown.py [MxNxK:layout ...]

Run 2 (WIDTHS=s16,4): session 16's planner against this one, whose TMA kernel stores C through pointers where
TMA cannot write it (in place of staging C) and which stages 4-byte reads where the copies pay.
"""
import collections
import os
import statistics
import sys
import tempfile

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, tuning
from bench.common import copies, interleaved_times, replay_errors
from bench.sweep import _graph, _operands

SHAPES = [(97, 70, 786, "NT"), (93, 529, 6074, "NT"), (130, 520, 6002, "NT"), (48, 4100, 2050, "NT"),
          (300, 214, 3000, "NN"), (2000, 90, 1506, "NT"), (512, 382, 1030, "NN"), (700, 1800, 2046, "NT"),
          (1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
# "2", "4": this code with POINTER_STAGE_MAX_LOAD_BYTES at that; "s16": session 16's planner (fcbda29), from a copy
# made by `mkdir -p _ab && git archive fcbda29 tritonmm | tar -x -C _ab && mv _ab/tritonmm _ab/tritonmm_s16 &&
# : > _ab/tritonmm_s16/__init__.py` (its plan module alone: an empty __init__ registers no torch ops twice).
SETTINGS = os.environ.get("WIDTHS", "2,4").split(",")
if "s16" in SETTINGS:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "_ab"))
    from tritonmm_s16 import plan as plan_s16, tuning as tuning_s16


def name(cfg):
    k = cfg.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{cfg.num_stages}"
            + (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1 else "") + (" tail" if k.get("TAIL") else ""))


def breakdown(graph, products: int, replays: int = 10) -> str:
    """Device us per product by kernel name, from torch.profiler over graph replays."""
    try:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(replays):
                graph.replay()
            torch.cuda.synchronize()
        per = collections.Counter()
        for e in prof.key_averages():
            us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
            if us and e.key not in ("Memcpy", "Memset"):
                per[e.key[:24]] += us / replays / products
        return " ".join(f"{k}={v:.1f}" for k, v in per.most_common(4))
    except Exception as e:  # noqa: BLE001 (the timing stands without it)
        return f"profiler: {type(e).__name__}"


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {n: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for n in ("torch", *SETTINGS)}
    graphs, picks, parts, moved = {"torch": _graph(lambda a, b: torch.mm(a, b, out=outs["torch"]), sets)}, {}, {}, {}
    for setting in SETTINGS:
        os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
        pl, tu = (plan_s16, tuning_s16) if setting == "s16" else (plan, tuning)
        tu.forget()
        pl._compiled.clear()
        if setting == "s16":
            call = lambda a, b, o=outs[setting]: pl.product(a, b, precision="native", out=o)  # noqa: E731
        else:
            plan.POINTER_STAGE_MAX_LOAD_BYTES = int(setting)
            call = lambda a, b, o=outs[setting]: tritonmm.matmul(a, b, out=o)  # noqa: E731
        call(*sets[0])
        graphs[setting] = _graph(call, sets)
        p = pl.Product(*sets[0], outs[setting], "native", captured=True)
        staged = moved[setting] = sum(2 * t.numel() * t.element_size() for t, s in zip(p.given, p.stagers) if s)
        c_ptr = " c-ptr" if not p.constants.get("C_DESC", True) else " c-staged" if getattr(p, "stage_c", False) else ""
        picks[setting] = f"{p.path}{'+staged' if p.staged else ''}{c_ptr}{' g' if p.graph_only else ''} " \
                         f"{name(tu._memory[p.tuning_key])} ({staged / 1e6:.1f} MB)"
    plan.POINTER_STAGE_MAX_LOAD_BYTES = 4
    errs = replay_errors(graphs, outs, sets)
    assert all(e < 1e-2 for e in errs.values()), errs
    rounds = interleaved_times({n: g.replay for n, g in graphs.items()}, 3)
    us = {n: statistics.median(v) / len(sets) * 1e3 for n, v in rounds.items()}
    for setting in SETTINGS:
        parts[setting] = breakdown(graphs[setting], len(sets))
    a0, b0 = sets[0]
    widths = ".".join(str(plan._load_bytes(t, plan._vec_hint(t))) for t in (a0, b0))
    macs_per_byte = M * N * K / max(moved.values(), default=0) if any(moved.values()) else float("nan")
    rows.append([f"{M}x{N}x{K} {layout}", widths, f"{macs_per_byte:.0f}", f"{us['torch']:.2f}"]
                + [f"{picks[s]}: {us[s]:.2f} ({us['torch'] / us[s]:.2f})" for s in SETTINGS])
    print(rows[-1], flush=True)
    for s in SETTINGS:
        print(f"    {s}: {parts[s]}", flush=True)
print(tabulate(rows, headers=["shape", "load B", "macs/staged B", "torch us"]
               + [f"max load {s}: pick, us (x torch)" for s in SETTINGS]))
