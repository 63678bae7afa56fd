"""Experiment (session 15): staging unaligned operands for the pointer kernel, K padded.

Products of few tiles (plan._few_tiles: split-K's products) and captured products under the TMA bar run on
the pointer kernel, which reads a row that is not 16-byte aligned 2, 4 or 8 bytes at a time, and a K-contiguous
operand whose K is no multiple of 8 elements through masks that split the 16-byte runs. Session 13's worst draw
shape, 333x138x2569 x @ W.T (30 tiles of 64x32, rows 5138 bytes apart: 2-byte loads), ran 0.47x torch.mm.
(Session 14's version staged without padding K, which leaves the K masks narrow: replaced unrun.)

Question: does copying the operands K-major into buffers whose K is padded with zeros to a multiple of 8
elements (both operands when K needs it; else only the narrow one), then running tritonmm on the aligned
buffers (its rules: pointer kernel, split-K where it applies), pay; and what does the copy cost alone?
The copy here is torch's copy_ into the valid region of a zeroed buffer (one launch an operand: the library
would do both in one launch, so this bounds the staged time from above).

Each shape, bf16, graph replay over operand copies rotated past the L2 (as the sweep), 3 interleaved rounds.

    PYTHONPATH=. python3 notes/experiments/pointer_staging.py
"""
import statistics

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan
from bench.common import copies, interleaved_times, tritonmm_config
from bench.sweep import _graph, _operands

# (M, N, K, layout): few tiles with long K, and small captured products; rows 2, 4 or 8 bytes apart.
SHAPES = [(333, 138, 2569, "NT"), (110, 2068, 1253, "NN"), (250, 700, 3333, "NT"), (64, 1000, 3001, "NT"),
          (200, 300, 4001, "NN"), (48, 4100, 2050, "NT"), (3154, 196, 167, "NN"), (683, 830, 449, "NT"),
          (690, 385, 598, "NN"), (941, 75, 194, "NT"), (130, 520, 6002, "NT"), (1000, 1004, 1012, "NN")]


def load_bytes(t):
    return plan._load_bytes(t, plan._vec_hint(t))


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    a0, b0 = sets[0]
    Kp = -(-K // 8) * 8
    stage = [Kp != K or load_bytes(t) < 16 for t in (a0, b0)]
    # K-major buffers (A: M x Kp rows; B: N x Kp rows, used transposed), zeroed once: copies fill [:K] only.
    bufs = [[torch.zeros(M, Kp, device="cuda", dtype=torch.bfloat16),
             torch.zeros(N, Kp, device="cuda", dtype=torch.bfloat16)] for _ in sets]
    index = {id(s[0]): i for i, s in enumerate(sets)}

    def copy_only(a, b):
        ba, bb = bufs[index[id(a)]]
        if stage[0]:
            ba[:, :K].copy_(a)
        if stage[1]:
            bb[:, :K].copy_(b.T)
        return ba, bb.T

    def staged(a, b):
        ba, bb = copy_only(a, b)
        return tritonmm.mm(ba if stage[0] else a, bb if stage[1] else b, out=out)

    calls = {"torch": lambda a, b: torch.mm(a, b, out=out), "rules": lambda a, b: tritonmm.mm(a, b, out=out),
             "staged": staged, "copy": copy_only}
    ref = a0.double() @ b0.double()
    for name, call in calls.items():
        call(a0, b0)  # tunes
        if name != "copy":
            err = ((out.double() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, (name, err)
    ba, bb = copy_only(a0, b0)
    configs = {"rules": tritonmm_config(a0, b0)[0],
               "staged": tritonmm_config(ba if stage[0] else a0, bb if stage[1] else b0)[0]}
    graphs = {name: _graph(call, sets) for name, call in calls.items()}
    rounds = interleaved_times({name: g.replay for name, g in graphs.items()}, 3)
    us = {k: statistics.median(v) / len(sets) * 1e3 for k, v in rounds.items()}
    staged_bytes = sum(2 * t.numel() * 2 for t, s in zip((a0, b0), stage) if s) or 1
    rows.append([f"{M}x{N}x{K} {layout}", f"{load_bytes(a0)}.{load_bytes(b0)}", "".join("AB"[i] for i in (0, 1) if stage[i]),
                 f"{M * N * K / staged_bytes:.0f}", f"{us['torch']:.2f}",
                 f"{us['rules']:.2f} ({us['torch'] / us['rules']:.2f})",
                 f"{us['staged']:.2f} ({us['torch'] / us['staged']:.2f})", f"{us['copy']:.2f}",
                 configs["rules"], configs["staged"]])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "load bytes A.B", "staged", "MACs / staged byte", "torch us",
                              "rules us (x torch)", "staged us (x torch)", "copy us", "rules: path, config",
                              "staged: config"]))
