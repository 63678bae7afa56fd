"""Experiment (session 20, run 1): split-K on the TMA kernel, for products whose tiles fill less than a few
waves of the SMs while K is long (LLM products of a few hundred rows against a large weight).

The draws' largest class below 0.9x cuBLAS (seeds 1-6): x @ W.T with M of 130-700 and N, K of 3072-28672, e.g.
288x8192x28672 0.71 (96 tiles of 128x256 on 132 SMs), 487x5120x5120 0.72 (80), 284x5120x5120 0.78,
601x8192x3072 0.76. Stream-K lost twice (sessions 6, 13: concurrently running programs at unrelated K, so
their B tiles stop sharing the L2), the split tail once (session 18: slices of short K). Here every tile is
split into SPLIT_K slices of K (kernels/gemm_tma.py), walked slice-major: the units that run at once are
neighbouring tiles at the same K, as whole tiles are. Each slice's fp32 sums go to a workspace that
kernels/split_k.py adds up in order with the epilogue (deterministic).

Predicted from tile counts (waves of units x K steps a unit, against one unsplit wave): 288x8192x28672 on
128x256, 4 slices: 384 units in 3 waves of a quarter of K, 0.75 of the time, plus the second pass: ~0.85-0.9x
cuBLAS from 0.71. 487x5120x5120, 3 slices: 240 units in 2 waves of a third: 0.67, but the workspace is 30 MB.

Per shape (bf16, graph replay over operand copies rotated past the L2, as bench/sweep.py times): every
candidate the tuner would time for the captured plan (no split), and split variants of four tiles with 2-8
slices of at least 8 K steps, each pinned and timed once; then torch.mm, the best unsplit and the best split
config in 3 interleaved rounds, checked against float64. Also cuBLAS's kernel names (torch.profiler).

    PYTHONPATH=. python3 notes/experiments/tma_split_k.py [MxNxK:layout ...]
"""
import os
import statistics
import sys
import tempfile

import torch
import triton
from tabulate import tabulate
from triton.runtime.errors import OutOfResources, PTXASError

import tritonmm
from tritonmm import config_space, plan, timing
from bench.common import copies, interleaved_times, kernels_run, replay_errors
from bench.sweep import _graph, _operands

SHAPES = [(288, 8192, 28672, "NT"), (487, 5120, 5120, "NT"), (284, 5120, 5120, "NT"), (227, 5120, 5120, "NT"),
          (398, 3072, 3072, "NT"), (149, 8192, 3072, "NT"), (443, 8192, 8192, "NT"), (577, 5120, 13824, "NT"),
          (134, 5120, 13824, "NT"), (601, 8192, 3072, "NT"), (947, 3072, 8192, "NT"), (259, 28672, 8192, "NT"),
          (1536, 1536, 1536, "NN"), (4096, 4096, 4096, "NN")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
TILES = [(128, 256, 64, 4, 8), (128, 256, 64, 3, 8), (128, 128, 64, 5, 4), (64, 256, 64, 4, 4)]
SPLITS = (2, 3, 4, 5, 6, 8)
MIN_STEPS = 8
os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
SMS = torch.cuda.get_device_properties(0).multi_processor_count


def name(cfg):
    k = cfg.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{cfg.num_stages} w{cfg.num_warps}" + \
        (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1 else "") + (" +tail" if k.get("TAIL") else "")


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out_t = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    print(f"{M}x{N}x{K} {layout}: cuBLAS {kernels_run(lambda: torch.mm(*sets[0], out=out_t))}", flush=True)
    p = plan.Product(*sets[0], out, "native", captured=True)
    assert p.path == "tma", p.path
    # Unsplit candidates only: since 3390d99 the tuner's candidates hold split variants too (tma_split_for),
    # which join the pinned split configs below.
    offered = p.candidates()
    base = [c for c in offered if config_space.split_k(c) == 1]
    k_steps = triton.cdiv(K, 64)
    splits = [config_space.make_config(*t, SPLIT_K=s) for t in TILES for s in SPLITS if k_steps // s >= MIN_STEPS]
    splits += [c for c in offered if config_space.split_k(c) > 1 and c not in splits]
    times = {}
    for cfg in base + splits:
        call = lambda a, b, c=cfg: tritonmm.matmul(a, b, out=out, config=c)  # noqa: E731
        try:
            call(*sets[0])
            g = _graph(call, sets)
        except (OutOfResources, PTXASError) as e:
            print(f"  {name(cfg)}: {type(e).__name__}", flush=True)
            continue
        times[cfg] = timing.median_ms(g.replay) / len(sets) * 1e3
        del g
    ranked = sorted(times, key=times.get)
    print("  " + ", ".join(f"{name(c)} {times[c]:.1f}" for c in ranked[:8]), flush=True)
    best_base = min((c for c in times if c in base), key=times.get)
    best_split = min((c for c in times if c not in base), key=times.get)
    outs = {n: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for n in ("torch", "base", "split")}
    graphs = {"torch": _graph(lambda a, b: torch.mm(a, b, out=outs["torch"]), sets),
              "base": _graph(lambda a, b: tritonmm.matmul(a, b, out=outs["base"], config=best_base), sets),
              "split": _graph(lambda a, b: tritonmm.matmul(a, b, out=outs["split"], config=best_split), sets)}
    for o in outs.values():
        o.fill_(float("nan"))
    errs = replay_errors(graphs, outs, sets)
    assert all(e < 1e-2 for e in errs.values()), errs
    rounds = interleaved_times({n: g.replay for n, g in graphs.items()}, 3)
    us = {n: statistics.median(v) / len(sets) * 1e3 for n, v in rounds.items()}
    tiles = triton.cdiv(M, best_split.kwargs["BLOCK_M"]) * triton.cdiv(N, best_split.kwargs["BLOCK_N"])
    rows.append([f"{M}x{N}x{K} {layout}", f"{us['torch']:.1f}",
                 f"{name(best_base)}: {us['base']:.1f} ({us['torch'] / us['base']:.2f})",
                 f"{name(best_split)} [{tiles} tiles]: {us['split']:.1f} ({us['torch'] / us['split']:.2f})",
                 f"{errs['split']:.1e}"])
    print(rows[-1], flush=True)
    del graphs, sets, outs
print(tabulate(rows, headers=["shape", "torch us", "best unsplit (x torch)", "best split (x torch)", "split err"]))
