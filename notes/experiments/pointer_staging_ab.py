"""Experiment (session 15, run 2): the pointer kernel's staging rule (plan.POINTER_STAGE_MAX_LOAD_BYTES), A/B.

Run 1 (pointer_staging.py) staged by hand with torch's copies and found the kernel 1.5-4x faster on K-major
copies with K padded, and the copies (two launches, a transposing one for row-major B) too slow to pay. The
library now stages with one copy_kernel launch for both operands. Here, per shape (bf16, graph replay over
operand copies rotated past the L2, as the sweep; 3 interleaved rounds): torch.mm; tritonmm with the rule off
(POINTER_STAGE_MAX_LOAD_BYTES = 0: the caller's operands); on (8: every read narrower than 16 bytes staged).
Each graph is captured under its setting and tuned before capture (product() tunes the captured plan).
Run 1's shapes, then ones it did not see, and aligned controls (nothing to stage: on = off).

    PYTHONPATH=. python3 notes/experiments/pointer_staging_ab.py
"""
import statistics

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan
from bench.common import copies, interleaved_times, rel_err
from bench.sweep import _graph, _operands

SEEN = [(333, 138, 2569, "NT"), (110, 2068, 1253, "NN"), (64, 1000, 3001, "NT"), (48, 4100, 2050, "NT"),
        (3154, 196, 167, "NN"), (690, 385, 598, "NN"), (130, 520, 6002, "NT"), (1000, 1004, 1012, "NN")]
UNSEEN = [(77, 4099, 2049, "NT"), (257, 515, 1031, "NN"), (500, 250, 777, "TN"), (2000, 100, 999, "NN"),
          (400, 1200, 2222, "NT")]
CONTROLS = [(256, 512, 4096, "NN")]

rows = []
for M, N, K, layout in SEEN + UNSEEN + CONTROLS:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {name: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for name in ("torch", "off", "on")}
    a0, b0 = sets[0]
    calls = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]),
             "off": lambda a, b: tritonmm.mm(a, b, out=outs["off"]),
             "on": lambda a, b: tritonmm.mm(a, b, out=outs["on"])}
    graphs, staged = {}, None
    for name, call in calls.items():
        plan.POINTER_STAGE_MAX_LOAD_BYTES = 8 if name == "on" else 0
        call(a0, b0)
        call(a0, b0)  # eager: tuned, then relaunched
        graphs[name] = _graph(call, sets)
        if name == "on":
            captured = plan.Product(a0, b0, outs["on"], "native", captured=True)
            kernel_k = captured.args[8] if captured.path == "pointer" else K
            staged = f"{captured.path}{'+staged' if captured.staged else ''} K={kernel_k}"
    for g in graphs.values():
        g.replay()
    torch.cuda.synchronize()
    # The graphs' last call per output is of the last operand set.
    ref = sets[-1][0].double() @ sets[-1][1].double()
    errs = {name: rel_err(outs[name], ref) for name in calls}
    assert all(e < 1e-2 for e in errs.values()), errs
    rounds = interleaved_times({name: g.replay for name, g in graphs.items()}, 3)
    us = {k: statistics.median(v) / len(sets) * 1e3 for k, v in rounds.items()}
    widths = ".".join(str(plan._load_bytes(t, plan._vec_hint(t))) for t in (a0, b0))
    group = "seen" if (M, N, K, layout) in SEEN else "unseen" if (M, N, K, layout) in UNSEEN else "control"
    rows.append([f"{M}x{N}x{K} {layout}", group, widths, staged, f"{us['torch']:.2f}",
                 f"{us['off']:.2f} ({us['torch'] / us['off']:.2f})", f"{us['on']:.2f} ({us['torch'] / us['on']:.2f})",
                 f"{us['off'] / us['on']:.2f}"])
    print(rows[-1], flush=True)
plan.POINTER_STAGE_MAX_LOAD_BYTES = 8
print(tabulate(rows, headers=["shape", "group", "load bytes A.B", "on: captured plan", "torch us",
                              "off us (x torch)", "on us (x torch)", "on speedup"]))
