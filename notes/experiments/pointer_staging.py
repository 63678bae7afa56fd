"""Experiment (session 14): staging unaligned operands for the pointer kernel.

Products of few tiles (plan._few_tiles: split-K's products) and captured products under the TMA bar run on
the pointer kernel, which reads a row that is not 16-byte aligned 2, 4 or 8 bytes at a time. The staging rule
(plan.STAGE_MIN_MACS_PER_BYTE) copies such operands into aligned buffers only for the TMA kernel. The second
draw's worst shape, 333x138x2569 x @ W.T (30 tiles of 64x32, rows 5138 bytes apart: 2-byte loads), ran 0.47x
torch.mm. Question: does staging the unaligned operands (one copy launch for both) and running the pointer
kernel on aligned buffers (16-byte loads, split-K tuned as usual) pay, and from which intensity and load width?

Each shape, bf16, graph replay over operand copies rotated past the L2 (as the sweep), 3 interleaved rounds:
torch.mm; tritonmm as the rules choose; the unaligned operands copied by plan._stage into aligned buffers
inside the call, then tritonmm.mm on them (tuned on its own: the pointer kernel, split-K where it applies).

    PYTHONPATH=. python3 notes/experiments/pointer_staging.py
"""
import statistics

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing
from bench.common import copies, tritonmm_config
from bench.sweep import _graph, _operands

# (M, N, K, layout): few tiles with long K, and small captured products; rows 2, 4 or 8 bytes apart.
SHAPES = [(333, 138, 2569, "NT"), (110, 2068, 1253, "NN"), (250, 700, 3333, "NT"), (64, 1000, 3001, "NT"),
          (200, 300, 4001, "NN"), (48, 4100, 2050, "NT"), (3154, 196, 167, "NN"), (683, 830, 449, "NT"),
          (690, 385, 598, "NN"), (941, 75, 194, "NT"), (130, 520, 6002, "NT")]


def load_bytes(t):
    return plan._load_bytes(t, plan._vec_hint(t))


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    a0, b0 = sets[0]
    stagers = [None if load_bytes(t) == 16 else plan._aligned_copy for t in (a0, b0)]

    def staged(a, b):
        return tritonmm.mm(*plan._stage(stagers, a, b), out=out)

    calls = {"torch": lambda a, b: torch.mm(a, b, out=out), "rules": lambda a, b: tritonmm.mm(a, b, out=out),
             "staged": staged}
    ref = a0.double() @ b0.double()
    for name, call in calls.items():
        call(a0, b0)  # tunes
        err = ((out.double() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (name, err)
    configs = {"rules": tritonmm_config(a0, b0)[0], "staged": tritonmm_config(*plan._stage(stagers, a0, b0))[0]}
    graphs = {name: _graph(call, sets) for name, call in calls.items()}
    us = {name: [] for name in calls}
    for _ in range(3):
        for name, g in graphs.items():
            us[name].append(timing.median_ms(g.replay) / len(sets) * 1e3)
    us = {k: statistics.median(v) for k, v in us.items()}
    per_byte = M * N * K / (sum(2 * t.numel() * 2 for t, s in zip((a0, b0), stagers) if s) or 1)
    rows.append([f"{M}x{N}x{K} {layout}", f"{load_bytes(a0)}.{load_bytes(b0)}", f"{per_byte:.0f}",
                 f"{us['torch']:.2f}", f"{us['rules']:.2f} ({us['torch'] / us['rules']:.2f})",
                 f"{us['staged']:.2f} ({us['torch'] / us['staged']:.2f})", configs["rules"], configs["staged"]])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "load bytes A.B", "MACs / staged byte", "torch us", "rules us (x torch)",
                              "staged us (x torch)", "rules: path, config", "staged: config"]))
