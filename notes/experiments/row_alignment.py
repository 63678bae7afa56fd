"""Experiment (session 12): the pointer kernel on rows 4 or 8 bytes apart, with and without the alignment
hints (gemm_kernel's VEC_* and DIV_*, plan.alignment), and against the staged TMA path.

Triton specializes integer arguments as divisible by 16 or not at all, so before the hints a bf16 row of
5938 elements (4-byte aligned) was read 2 bytes at a time, not pipelined: 150x5938x3242 ran 0.50x torch.mm
(session 12, run 1, shapes drawn at random). Compiled for sm_90 on the CPU machine, the hints give 4-, 8-
and 16-byte cp.async, pipelined. Question: how much faster, and does the staging rule (plan.
STAGE_MIN_MACS_PER_BYTE, set from the 2-byte pointer kernel's ~110 TFLOP/s) still pick the faster path?

Run 4: the same, with a variant that stages every unaligned operand (and C) for the TMA kernel: does
staging pay below 40 multiply-adds per staged byte, now that copies move two operands in one launch?

Each shape, bf16, graph replay over operand copies rotated past the L2 (as the sweep), each variant tuned
on its own, 3 interleaved rounds: torch.mm; tritonmm as the rules choose; the pointer kernel forced, with
hints; the pointer kernel forced without them (alignment() claiming nothing).

    PYTHONPATH=. python3 notes/experiments/row_alignment.py
"""
import statistics

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing
from bench.common import copies, tritonmm_config
from bench.sweep import _graph, _operands

# Run 3: rows 4 or 8 bytes apart, hints on and off. Run 4 (STAGED): unaligned products the staging rule left
# on the pointer kernel (under 40 multiply-adds per staged byte), staged by force.
SHAPES = [(150, 5938, 3242, "NN"), (1724, 182, 4786, "NT"), (110, 2068, 1253, "NN"), (1022, 1026, 1030, "NN"),
          (2046, 2050, 2054, "NN"), (3000, 3002, 2998, "NN"), (4094, 4098, 1530, "NN"), (78, 4100, 2050, "NT"),
          (1000, 4100, 2044, "NT"), (1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN")]
STAGED = [(150, 5938, 3242, "NN"), (1724, 182, 4786, "NT"), (77, 4099, 2049, "NT"), (683, 830, 449, "NT"),
          (690, 385, 598, "NN"), (2090, 4654, 798, "NT"), (751, 3247, 185, "NT"), (300, 3001, 1001, "NN"),
          (500, 1999, 777, "NT"), (941, 75, 194, "NT")]
REAL = plan.alignment
FORCED = dict(TMA_MIN_MACS=float("inf"), STAGE_MIN_MACS_PER_BYTE=float("inf"))
NO_HINTS = lambda a3, b3, c3, M, N, K, traced=False: REAL(a3, b3, c3, M, N, K, True)  # noqa: E731
STAGE = dict(STAGE_MIN_MACS_PER_BYTE=0, STAGE_EAGER_MIN_MACS=0)
RUN = "staged"  # run 3: "hints"
VARIANTS = {"rules": ({}, REAL)}
VARIANTS.update({"pointer": (FORCED, REAL), "pointer, no hints": (FORCED, NO_HINTS)} if RUN == "hints" else
                {"staged": (STAGE, REAL)})  # run 4: the rules leave these shapes on the pointer kernel


def operand_sets(M, N, K, layout):
    """bf16 operand sets, as many as rotate past the L2 (as the sweep makes them)."""
    return [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]


def patched(name, fn):
    bars, alignment = VARIANTS[name]

    def call(*args):
        saved = {k: getattr(plan, k) for k in bars}
        for k, v in bars.items():
            setattr(plan, k, v)
        plan.alignment = alignment
        plan._compiled.clear()  # relaunch keys do not hold the patches
        try:
            return fn(*args)
        finally:
            for k, v in saved.items():
                setattr(plan, k, v)
            plan.alignment = REAL
    return call


rows = []
for M, N, K, layout in (SHAPES if RUN == "hints" else STAGED):
    sets = operand_sets(M, N, K, layout)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    calls = {"torch": lambda a, b: torch.mm(a, b, out=out)}
    for name in VARIANTS:
        calls[name] = patched(name, lambda a, b: tritonmm.mm(a, b, out=out))
    paths = {}
    for name, call in calls.items():
        call(*sets[0])  # tunes this variant
        if name != "torch":
            paths[name] = patched(name, lambda a, b: tritonmm_config(a, b)[0])(*sets[0])
            ref = sets[0][0].double() @ sets[0][1].double()
            err = ((out.double() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, (name, err)
    graphs = {name: _graph(call, sets) for name, call in calls.items()}
    us = {name: [] for name in calls}
    for _ in range(3):
        for name, g in graphs.items():
            us[name].append(timing.median_ms(g.replay) / len(sets) * 1e3)
    us = {k: statistics.median(v) for k, v in us.items()}
    launch = plan.Product(*sets[0], out, "native")
    per_byte = M * N * K / launch._staged_bytes()
    rows.append([f"{M}x{N}x{K} {layout}", f"{per_byte:.0f}", f"{us['torch']:.1f}"]
                + [f"{us[n]:.1f} ({us['torch'] / us[n]:.2f})" for n in VARIANTS]
                + [paths[n] for n in VARIANTS])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "MACs / staged byte", "torch us", *[f"{n} us (x torch)" for n in VARIANTS],
                              *[f"{n}: path, config" for n in VARIANTS]]))
