"""Experiment (session 13): stream-K against whole tiles and the wave-tail split on mid-size products.

Products whose tiles leave the persistent kernel's last round mostly empty run at 0.73-0.86x cuBLAS
(1536^3, 1664^3, 2176^3, 1000-1500 rows on long K or wide N; session 12, runs 10-11). Stream-K
(kernels/stream_k.py) gives every SM the same number of K steps. Each config is pinned on the TMA path
(16-bit space, its TAIL variants, and STREAM_K variants of every tile of 128x128 or more) and timed as
the sweep times: CUDA-graph replay over operand copies rotated past the L2, 3 interleaved rounds with
torch.mm. Question: where does the best stream-K config lead the best of the others, and by how much;
which tile does stream-K want?

    git checkout beda4d2  # the library with stream-K as a tuner variant; reverted after runs 1-3
    PYTHONPATH=. python3 notes/experiments/stream_k.py
"""
import os
import sys

import torch
from tabulate import tabulate

sys.path.insert(0, os.path.dirname(__file__))
from landscape import graph_of, operands, timed  # noqa: E402

import tritonmm  # noqa: E402
from tritonmm import config_space as cs, plan  # noqa: E402
from bench.common import copies  # noqa: E402

SMS = torch.cuda.get_device_properties(0).multi_processor_count
SHAPES = [(1536, 1536, 1536, "NN"), (1664, 1664, 1664, "NN"), (2176, 2176, 2176, "NN"), (1024, 1024, 1024, "NN"),
          (1280, 1280, 1280, "NN"), (1250, 2048, 6144, "NT"), (1057, 8192, 8192, "NT"), (1907, 3072, 3072, "NT"),
          (1509, 6144, 2048, "NT"), (400, 4832, 3616, "NN"), (3072, 3072, 3072, "NN"), (3000, 3008, 3000, "NN"),
          (2560, 2560, 2560, "NN"), (4096, 4096, 4096, "NN"), (768, 768, 768, "NN")]
SPACE = cs.space("16bit")
STREAM = [cs.make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(c.kwargs, STREAM_K=1))
          for c in SPACE + [cs.make_config(256, 128, 64, 3, 8)] if c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] >= 128 * 128]


def name(c):
    k = c.kwargs
    return (f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{c.num_stages} w{c.num_warps} g{k['GROUP_M']}"
            + (" tail" if cs.tail(c) else "") + (" SK" if cs.stream_k(c) else ""))


plan.TMA_MIN_MACS = 0
summary = []
for M, N, K, layout in SHAPES:
    n = copies((M * K + K * N) * 2)
    sets = operands(M, N, K, layout, n)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    graphs, per = {"torch": graph_of(lambda a, b: torch.mm(a, b, out=out), sets)}, {"torch": n}
    tails = [c for c in cs.with_tail(SPACE, M, N, SMS) if cs.tail(c)]
    for c in SPACE + tails + STREAM:
        fn = (lambda c: lambda a, b: tritonmm.mm(a, b, out=out, config=c))(c)
        try:
            fn(*sets[0])
            torch.cuda.synchronize()
            graphs[name(c)] = graph_of(fn, sets)
            per[name(c)] = n
        except Exception as e:  # noqa: BLE001
            print(f"{name(c)}: {type(e).__name__} {str(e)[:100]}")
    ref = sets[0][0].double() @ sets[0][1].double()
    tritonmm.mm(*sets[0], out=out, config=STREAM[0])
    err = ((out.double() - ref).norm() / ref.norm()).item()
    us = timed(graphs, per)
    rows = [[k, f"{v:.2f}", f"{us['torch'] / v:.2f}"] for k, v in sorted(us.items(), key=lambda kv: kv[1])
            if k != "torch"][:10]
    print(f"\n== {M}x{N}x{K} {layout} bf16, {n} copies: torch.mm {us['torch']:.2f} us; stream-K rel err {err:.1e}")
    print(tabulate(rows, headers=["config", "us", "x cuBLAS"]))
    best = {kind: min(((v, k) for k, v in us.items() if k != "torch" and kind(k)), default=(float("nan"), "-"))
            for kind in (lambda k: "SK" not in k and "tail" not in k, lambda k: "tail" in k, lambda k: "SK" in k)}
    (dp, dpn), (tl_, tln), (sk, skn) = best.values()
    offered = [name(c) for c in cs.with_stream_k(SPACE, M, N, K, SMS) if cs.stream_k(c)]
    summary.append([f"{M}x{N}x{K} {layout}", f"{us['torch'] / dp:.2f}", f"{us['torch'] / tl_:.2f}",
                    f"{us['torch'] / sk:.2f}", skn, "yes" if skn in offered else "no"])
    sys.stdout.flush()
    del sets, graphs
print("\n== summary (x cuBLAS; best of each kind)")
print(tabulate(summary, headers=["shape", "tiles", "tail", "stream-K", "best stream-K", "offered"]))
