"""Experiment (session 13, run 6): the pointer kernel's two hint forms, each at its best config, on unaligned products.

Run 5 (hint_ab.py, pinned configs) found the hints on the 1-D offset terms (the kernel now) against session 12's
[VEC, 1] claims on the broadcast terms (notes/experiments/gemm_hints_s12.py) mixed on Triton 3.6: 110x2068x1253 NN
(B rows 8-byte aligned) 18.3 -> 13.2 us at 64x64x128, 150x5938x3242 NN (4-byte) 83.7 -> 127.6 at 64x64x128 but
232.5 -> 129.2 at 64x128x64 s6. The tuner picks per product, so the question is the best config of each form:
here six pointer configs (those the tuner picked on the sweeps' unaligned products) are pinned per form, launched
directly with the arguments Product builds, graph replay (timing.median_ms graph=True), L2-warm, 2 interleaved rounds.

    PYTHONPATH=. python3 notes/experiments/hint_form.py notes/experiments/gemm_hints_s12.py
"""
import importlib.util
import statistics
import sys

import torch
from tabulate import tabulate

from tritonmm import plan, timing
from bench.sweep import _operands

spec = importlib.util.spec_from_file_location("gemm_s12", sys.argv[1])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)

SHAPES = [(110, 2068, 1253, "NN"), (150, 5938, 3242, "NN"), (333, 138, 2569, "NT"), (3154, 196, 167, "NN"),
          (1724, 182, 4786, "NN"), (751, 3247, 185, "NN"), (1000, 1002, 1004, "NN"), (1000, 1004, 1012, "NN")]
CONFIGS = [(64, 64, 128, 4, 4), (64, 128, 64, 6, 4), (128, 64, 64, 6, 4), (64, 256, 64, 4, 4), (128, 128, 64, 5, 4),
           (64, 32, 256, 4, 4)]

rows = []
for M, N, K, layout in SHAPES:
    a, b = _operands(M, N, K, layout, torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    launch = plan.Product(a, b, c, "native")
    assert launch.path == "pointer", (M, N, K)
    ref = a.double() @ b.double()
    fns = {}
    for bm, bn, bk, st, w in CONFIGS:
        tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
        grid, opts = launch.grid(tile), dict(num_warps=w, num_stages=st)
        for form, kernel in (("s12", old.gemm_kernel), ("1-D", plan.gemm_kernel)):
            fn = (lambda kernel, grid, tile, opts: lambda: kernel[grid](*launch.args, **launch.constants, **tile, **opts))(
                kernel, grid, tile, opts)
            c.fill_(float("nan"))
            fn()
            err = ((c.double() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, (form, err)
            fns[(form, f"{bm}x{bn}x{bk} s{st}")] = fn
    us = {k: [] for k in fns}
    for _ in range(2):
        for k, fn in fns.items():
            us[k].append(timing.median_ms(fn, graph=True) * 1e3)
    us = {k: statistics.median(v) for k, v in us.items()}
    best = {form: min((v, cfg) for (f, cfg), v in us.items() if f == form) for form in ("s12", "1-D")}
    hints = " ".join(f"{k[0]}{k[-1]}={launch.constants[k]}" for k in ("VEC_A", "VEC_B", "VEC_C"))
    rows.append([f"{M}x{N}x{K} {layout}", hints, f"{best['s12'][0]:.2f} ({best['s12'][1]})",
                 f"{best['1-D'][0]:.2f} ({best['1-D'][1]})", f"{best['s12'][0] / best['1-D'][0]:.2f}"])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "hints", "session 12 form: best us (config)", "1-D form: best us (config)",
                              "s12 / 1-D"]))
