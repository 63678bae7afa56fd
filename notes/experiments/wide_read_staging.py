"""Experiment (session 19, run 5): staging for the TMA kernel where the pointer kernel reads 8 bytes at a time.

Inside a CUDA graph an operand TMA cannot read (rows not 16-byte aligned) is copied into an aligned buffer where
the product does at least plan.STAGE_MIN_MACS_PER_BYTE (16) multiply-adds per byte the copies move. That bar
was measured on rows of odd length, which the pointer kernel reads 2 bytes at a time (session 12). Run 4
(graph_twin.py) and session 18's draw: 3027x70x2332 x @ W.T (rows of 2332 bf16: 8-byte reads, 17.5 per byte)
ran 25.6 us staged in the draw's graph, 20.6 on the pointer kernel over the caller's operands. Here, for
products whose rows are 8-byte aligned and none 16-byte aligned: graph replay over operand copies rotated
past the L2 (the sweep's _graph over tritonmm.matmul, copies included), as shipped against the bars at infinity
(no staging for TMA: the pointer kernel on the caller's operands), each tuned cold, and torch.mm; 3 rounds.
Run 5 ran it on session 18's rule (one bar, 16); run 7 on the rule it led to (STAGE_MIN_MACS_PER_BYTE_WIDE_READS
for 8-byte reads), whose "never staged" column then still staged from that bar (fixed here after run 7).

    PYTHONPATH=. python3 notes/experiments/wide_read_staging.py
"""
import os
import statistics
import tempfile

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, tuning
from bench.common import copies, interleaved_times, replay_errors
from bench.sweep import _graph, _operands

SHAPES = [(3027, 70, 2332, "NT"), (2000, 92, 3004, "NT"), (5124, 140, 244, "NN"), (300, 4100, 2052, "NT"),
          (1020, 1020, 1020, "NN"), (700, 3068, 1500, "NT"), (2044, 2044, 2044, "NN"), (4092, 4092, 4092, "NN")]
BARS = plan.STAGE_MIN_MACS_PER_BYTE, plan.STAGE_MIN_MACS_PER_BYTE_WIDE_READS


def setting_product(bars):
    plan.STAGE_MIN_MACS_PER_BYTE, plan.STAGE_MIN_MACS_PER_BYTE_WIDE_READS = bars
    os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
    tuning.forget()
    plan._compiled.clear()


rows = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {n: torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for n in ("torch", "staged", "pointer")}
    graphs = {"torch": _graph(lambda a, b: torch.mm(a, b, out=outs["torch"]), sets)}
    picks = {}
    for name, bars in (("staged", BARS), ("pointer", (float("inf"),) * 2)):
        setting_product(bars)
        call = lambda a, b, o=outs[name]: tritonmm.matmul(a, b, out=o)  # noqa: E731
        call(*sets[0])
        graphs[name] = _graph(call, sets)
        p = plan.Product(*sets[0], outs[name], "native", captured=True)
        cfg = tuning._memory[p.tuning_key]
        k = cfg.kwargs
        picks[name] = f"{p.path}{'+staged' if p.staged else ''} {k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} " \
                      f"s{cfg.num_stages}" + (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1 else "")
        staged = p._staged_bytes()  # the pointer setting's: its operands are the caller's
    setting_product(BARS)
    errs = replay_errors(graphs, outs, sets)
    assert all(e < 1e-2 for e in errs.values()), errs
    rounds = interleaved_times({n: g.replay for n, g in graphs.items()}, 3)
    us = {n: statistics.median(v) / len(sets) * 1e3 for n, v in rounds.items()}
    widths = ".".join(str(plan._load_bytes(x, plan._vec_hint(x))) for x in sets[0])
    rows.append([f"{M}x{N}x{K} {layout}", widths, f"{M * N * K / max(staged, 1):.0f}", f"{us['torch']:.2f}"]
                + [f"{picks[n]}: {us[n]:.2f} ({us['torch'] / us[n]:.2f})" for n in ("staged", "pointer")])
    print(rows[-1], flush=True)
    del graphs, sets, outs
print(tabulate(rows, headers=["shape", "load B", "macs/staged B", "torch us", "as shipped: pick, us (x torch)",
                              "never staged for TMA"]))
