"""Experiment (session 9, run 9): fp16 4096^3 NN ran 0.93x cuBLAS in run 7's sweep, tuned to 128x256x64
with 4 stages, where session 8's tune took 3 stages (0.99). Both pinned, with GROUP_M 16, interleaved
over 5 rounds in graph replay: operands rotated past the L2 (as the sweep) and one operand set (as
the tuner times). Tells tuner noise from a real difference.

    PYTHONPATH=. python3 notes/experiments/stages_4096.py
"""
import statistics

import torch
from triton.testing import do_bench

import tritonmm
from tritonmm import config_space

M = N = K = 4096
sets = [(torch.randn(M, K, device="cuda").half(), torch.randn(K, N, device="cuda").half()) for _ in range(2)]
CONFIGS = {"s3": config_space.make_config(128, 256, 64, 3, 8), "s4": config_space.make_config(128, 256, 64, 4, 8),
           "s4 g16": config_space.make_config(128, 256, 64, 4, 8, GROUP_M=16)}


def graph_us(call, operands):
    for a, b in operands:
        call(a, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for a, b in operands:
            call(a, b)
    return do_bench(g.replay, warmup=10, rep=100) * 1e3 / len(operands)


calls = {"torch.mm": lambda a, b: torch.mm(a, b)}
calls.update({name: (lambda cfg: lambda a, b: tritonmm.mm(a, b, config=cfg))(cfg) for name, cfg in CONFIGS.items()})
for label, operands in (("rotated", sets), ("one set", sets[:1])):
    times = {name: [] for name in calls}
    for _ in range(5):
        for name, call in calls.items():
            times[name].append(graph_us(call, operands))
    base = statistics.median(times["torch.mm"])
    print(label, "  ".join(f"{name} {statistics.median(t):.1f} us ({base / statistics.median(t):.3f}x)"
                           for name, t in times.items()), flush=True)
