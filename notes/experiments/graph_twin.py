"""Experiment (session 19, run 4): captured products ranked by device time (plan.Product.twin).

Before: a product that eager calls and CUDA graphs run with the same launches shared one tuned config, ranked
by the larger of device time and an eager call's host time (18 us one launch, 26 us two), so inside a graph a
one-launch config could win over a split-K one that ran faster on the device. The draw of session 18 (seed 5)
had 3027x70x2332 x @ W.T at 0.72x cuBLAS in graph replay on one launch of 64x64x128, its split-K variants
candidates. Now an eager tuning ranks the same graph timings twice and caches a captured key's winner by device
time. Per shape (bf16, fresh cache): tuning.tune on the eager product (every candidate's device time; the
top 4 printed), then graph replay over operand copies rotated past the L2 of torch.mm, the eager config and the
captured config (run as the captured plan), 3 interleaved rounds; the captured config checked against float64.

    PYTHONPATH=. python3 notes/experiments/graph_twin.py [MxNxK:layout ...]

Ran once (run 4) against a change that was not kept, so it does not run at any commit: Product.twin (whether
eager calls and graphs run the same launches), Product.keyed(captured) (every captured plan keyed '~graph'), and
tuning.tune storing the twin's device-time winner. The change moved nothing: on all 10 twin shapes measured the
same config won both ways (NOTES.md, session 19). Read its "captured config" column with care: Product.run
launches the kernels only, so for a captured plan with staged operands (no 'tw' mark) it leaves out the copies.
"""
import os
import statistics
import sys
import tempfile

import torch
from tabulate import tabulate

from tritonmm import plan, timing, tuning
from bench.common import copies, rel_err
from bench.sweep import _operands

SHAPES = [(3027, 70, 2332, "NT"), (1680, 1872, 272, "NN"), (832, 832, 832, "NN"), (448, 432, 320, "NT"),
          (576, 576, 576, "NN"), (400, 7440, 256, "NN"), (5122, 138, 242, "NN"), (412, 147, 3355, "NT"),
          (2965, 2210, 199, "NN"), (1280, 1280, 1280, "NN"), (49, 5120, 5120, "NT"), (8, 3072, 8192, "NT"),
          (256, 256, 256, "NN"), (512, 512, 512, "NN"), (768, 768, 768, "NN"), (1024, 1024, 1024, "NN"),
          (16, 4096, 4096, "NT"), (64, 4096, 4096, "NT"), (128, 4096, 4096, "NT"), (16384, 1024, 256, "NN"),
          (77, 4099, 2049, "NT"), (2048, 2048, 1000, "NN"), (1023, 1025, 1027, "NN")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]


def name(cfg):
    k = cfg.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{cfg.num_stages}"
            + (f" sk{k['SPLIT_K']}" if k.get("SPLIT_K", 1) > 1 else "") + (" tail" if k.get("TAIL") else ""))


rows = []
for M, N, K, layout in SHAPES:
    os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
    tuning.forget()
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
    eager = plan.Product(*sets[0], outs[0], "native")
    _, timings = tuning.tune(eager)
    cfg_e = tuning.choose_config(eager)
    captured = [plan.Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
    cfg_g = tuning.choose_config(captured[0])
    top = " ".join(f"{name(c)}={ms * 1e3:.1f}" for c, ms in sorted(timings.items(), key=lambda kv: kv[1])[:4])
    eagers = [plan.Product(a, b, c, "native") for (a, b), c in zip(sets, outs)]
    fns = {"torch": lambda: [torch.mm(a, b, out=c) for (a, b), c in zip(sets, outs)],
           "eager cfg": lambda: [p.run(cfg_e) for p in eagers],
           "graph cfg": lambda: [p.run(cfg_g) for p in captured]}
    outs[0].fill_(float("nan"))
    captured[0].run(cfg_g)
    err = rel_err(outs[0], sets[0][0].double() @ sets[0][1].double())
    t = {k: [] for k in fns}
    for _ in range(3):
        for k, fn in fns.items():
            t[k].append(timing.median_ms(fn, rep_ms=50, graph=True) / len(sets) * 1e3)
    us = {k: statistics.median(v) for k, v in t.items()}
    rows.append([f"{M}x{N}x{K} {layout}", eager.path + ("+st" if eager.staged else ""), f"{us['torch']:.2f}",
                 f"{name(cfg_e)}: {us['eager cfg']:.2f} ({us['torch'] / us['eager cfg']:.2f})",
                 f"{name(cfg_g)}{' tw' if captured[0].twin else ''}: {us['graph cfg']:.2f} "
                 f"({us['torch'] / us['graph cfg']:.2f})", f"{err:.1e}", top])
    print(rows[-1], flush=True)
    del captured, eagers, sets, outs
print(tabulate(rows, headers=["shape", "path", "torch us", "eager config: us (x torch)",
                              "captured config: us (x torch)", "rel err", "fastest 4 in tuning, us"]))
