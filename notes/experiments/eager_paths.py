"""Experiment (session 11): which kernel path wins an eager call, now that a TMA relaunch costs the
pointer kernel's host time (fast_launch.py's direct launch: 22.6 against 22.4 us at 64^3, run 2).

plan.TMA_MIN_MACS (2**31) keeps eager products below it on the pointer kernel because a TMA launch
cost ~12-20 us more on the host (sessions 3-10); inside CUDA graphs the TMA kernel already serves
them from 2**29 (CAPTURED_TMA_DIVISOR). Here each path is forced and tuned, then timed as the sweep's
eager column times (wall clock over back-to-back calls cycling through operand copies rotated past
the L2: host and device together), 3 interleaved rounds with torch.mm. Question: below 2**31, does
the TMA kernel now win eagerly where it wins in graphs?

    PYTHONPATH=. python3 notes/experiments/eager_paths.py
"""
import itertools
import statistics

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing
from bench.common import copies
from bench.sweep import _operands

SHAPES = [(512, 512, 512, "NN"), (768, 768, 768, "NN"), (1024, 1024, 1024, "NN"), (1280, 1280, 1280, "NN"),
          (1536, 1536, 1536, "NN"), (2048, 2048, 1000, "NN"), (2048, 1024, 1024, "NN"), (128, 4096, 4096, "NT"),
          (256, 4096, 4096, "NT"), (512, 1024, 1024, "NT"), (16384, 1024, 256, "NN")]


def operand_sets(M, N, K, layout):
    """bf16 operand sets, as many as rotate past the L2 (as the sweep makes them)."""
    return [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]


rows = []
saved = plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM
for M, N, K, layout in SHAPES:
    sets = operand_sets(M, N, K, layout)
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in ("torch", "pointer", "tma")}
    bars = {"pointer": (float("inf"), saved[1]), "tma": (0, 0)}

    def call(name):
        cycle = itertools.cycle(sets)
        if name == "torch":
            return lambda: torch.mm(*next(cycle), out=outs["torch"])

        def fn():
            plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = bars[name]
            tritonmm.mm(*next(cycle), out=outs[name])
        return fn
    fns = {name: call(name) for name in outs}
    for name, fn in fns.items():
        fn()  # tunes the path
    paths = {}
    for name in ("pointer", "tma"):
        plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = bars[name]
        paths[name] = plan.chosen(*sets[0], "native")
    us = {name: [] for name in fns}
    for _ in range(3):
        for name, fn in fns.items():
            us[name].append(timing.host_us_per_call(fn, calls=300))
    us = {k: statistics.median(v) for k, v in us.items()}
    rows.append([f"{M}x{N}x{K} {layout}", f"{M * N * K / 2 ** 31:.2f}", f"{us['torch']:.1f}",
                 f"{us['pointer']:.1f}", f"{us['tma']:.1f}", f"{us['torch'] / us['pointer']:.2f}",
                 f"{us['torch'] / us['tma']:.2f}", paths["pointer"][1], paths["tma"][1]])
    print(rows[-1], flush=True)
plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = saved
print(tabulate(rows, headers=["shape", "MACs / 2^31", "torch us", "pointer us", "tma us", "x torch (pointer)",
                              "x torch (tma)", "pointer path", "tma path"]))
