"""Experiment (session 16, run 2): does the tuner pick badly on the shapes that run far behind cuBLAS?

Session 16's draw (seed 3) ran 10 of 40 shapes below 0.9x torch.mm in graph replay, most of them products whose
tiles leave SMs idle (944x5216x976: 168 tiles of 128x256 for 132 SMs). Two questions per shape, on the plan a
CUDA graph runs (Product(captured=True)):
1. Is any candidate config much faster than the one the tuner picks? If none is, the gap is the kernels'.
2. The tuner times each config on the product's own operands, L2-warm; the sweep (and a model's layers) read
   operands from HBM. Does timing over copies rotated past the L2 ("cold", as the sweep) pick other configs?
Every candidate is timed both ways (CUDA-graph replay); the table gives torch.mm cold, the warm pick's cold time
and the cold pick's, and the best-to-worst spread. First 2176^3's eager anomaly (eager 0.64x against graph 0.85x
in the draw): the tuned product's wall time per eager call, its graph time, and the Python call's own time.

    PYTHONPATH=. python3 notes/experiments/tune_cold.py
"""
import statistics
import sys
import time

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import config_space, plan, timing
from bench.common import copies
from bench.sweep import _operands

SHAPES = [(5728, 272, 1120, "NT"), (944, 5216, 976, "NN"), (2880, 800, 1680, "NN"), (284, 5120, 5120, "NT"),
          (1088, 1088, 1088, "NN"), (507, 6144, 2048, "NT"), (3437, 78, 1058, "NN"), (149, 8192, 3072, "NT"),
          (1472, 1472, 1472, "NN"), (162, 3072, 3072, "NT"), (1536, 1536, 1536, "NN"), (768, 768, 768, "NN"),
          (2176, 2176, 2176, "NN")]
CONTROLS = [(1024, 1024, 1024, "NN"), (3072, 3072, 3072, "NN")]


def name(cfg):
    k = cfg.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages}"
            + (f" g{k['GROUP_M']}" if k["GROUP_M"] != 8 else "") + (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1 else "")
            + (" tail" if k.get("TAIL") else ""))


# 2176^3 eagerly: wall per call (as the sweep's eager column), graph per call, and the Python call's own time.
M = N = K = 2176
sets = [_operands(M, N, K, "NN", torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
for fn_name, fn in (("tritonmm", lambda a, b: tritonmm.matmul(a, b, out=out)), ("torch", lambda a, b: torch.mm(a, b, out=out))):
    fn(*sets[0])
    i = iter(range(10 ** 9))
    wall = timing.host_us_per_call(lambda: fn(*sets[next(i) % len(sets)]), calls=400)
    graph_us = timing.median_ms(lambda: [fn(a, b) for a, b in sets], rep_ms=25, graph=True) / len(sets) * 1e3
    host = []
    for j in range(400):
        if j % 8 == 0:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*sets[j % len(sets)])
        host.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    print(f"2176^3 {fn_name}: eager wall {wall:.1f} us a call, graph {graph_us:.1f}, the call's host time "
          f"median {statistics.median(host):.1f} (p90 {sorted(host)[360]:.1f})", flush=True)
print("2176^3 eager config:", plan.chosen(*sets[0], "native"))
del sets, out

rows = []
for M, N, K, layout in SHAPES + CONTROLS:
    start = time.time()
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
    products = [plan.Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
    cands = products[0].candidates()
    warm, cold = {}, {}
    for cfg in cands:
        try:
            products[0].run(cfg)
            warm[cfg] = timing.median_ms(lambda: products[0].run(cfg), rep_ms=25, graph=True)
            cold[cfg] = timing.median_ms(lambda: [p.run(cfg) for p in products], rep_ms=25, graph=True) / len(products)
        except Exception as e:  # an unrunnable config: as the tuner, infinitely slow
            print("  skip", name(cfg), type(e).__name__, file=sys.stderr)
            warm[cfg] = cold[cfg] = float("inf")
    torch_cold = timing.median_ms(lambda: [torch.mm(a, b, out=c) for (a, b), c in zip(sets, outs)], rep_ms=25,
                                  graph=True) / len(sets)
    ref = sets[0][0].double() @ sets[0][1].double()
    pick_w, pick_c = min(warm, key=warm.get), min(cold, key=cold.get)
    products[0].run(pick_c)
    err = ((outs[0].double() - ref).norm() / ref.norm()).item()
    assert err < 1e-2, err
    finite = [v for v in cold.values() if v < float("inf")]
    rows.append([f"{M}x{N}x{K} {layout}", products[0].path + ("+staged" if products[0].staged else ""), len(sets),
                 f"{torch_cold * 1e3:.2f}", f"{name(pick_w)}: {cold[pick_w] * 1e3:.2f} ({torch_cold / cold[pick_w]:.2f})",
                 f"{name(pick_c)}: {cold[pick_c] * 1e3:.2f} ({torch_cold / cold[pick_c]:.2f})",
                 f"{max(finite) / min(finite):.2f}", f"{time.time() - start:.0f}s"])
    print(rows[-1], flush=True)
    for cfg in sorted(cands, key=cold.get)[:4]:
        print(f"    {name(cfg):28} warm {warm[cfg] * 1e3:8.2f} cold {cold[cfg] * 1e3:8.2f}", flush=True)
    del products, sets, outs

print(tabulate(rows, headers=["shape", "captured plan", "copies", "torch cold us", "warm pick: cold us (x torch)",
                              "cold pick: cold us (x torch)", "worst/best", "took"]))
