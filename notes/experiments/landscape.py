"""Experiment (session 7): the configs' landscape on the sweep's slow TMA shapes, and a wave-tail split.

Part 1. Every 16-bit config of the space (and a few outside it), pinned, on the TMA path, timed in
CUDA-graph replay two ways: "tuner" (one operand set, as tuning.py times) and "sweep" (operand copies
rotated past the L2, as bench/sweep.py times). 3 interleaved rounds with torch.mm; ratios x cuBLAS
(sweep condition). Question: does the tuner's condition rank the configs as the sweep's does?

Part 2. Wave-tail split: C's rows [0, M1) on 128-row tiles filling whole waves of the SMs, the rest
in a second launch of smaller tiles (two pinned calls on row slices, graph-timed together). At
3072^3 the 288 tiles of 128x256 run as 3 rounds on 132 SMs, the third holding 24 tiles; predicted:
the tail on 64x128 tiles costs about a third of a round, so 3 rounds -> ~2.4 (1.2x).

    PYTHONPATH=. python3 notes/experiments/landscape.py
"""
import statistics
import sys

import torch
import triton
from tabulate import tabulate

import tritonmm
from tritonmm import plan
from bench.common import copies

SMS = torch.cuda.get_device_properties(0).multi_processor_count
dt = torch.bfloat16


def cfg(bm, bn, bk, s, w, g=8):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_stages=s, num_warps=w, GROUP_M=g)


SPACE = [cfg(128, 256, 64, 4, 8), cfg(128, 256, 64, 4, 8, 4), cfg(128, 256, 64, 4, 8, 16), cfg(128, 256, 64, 3, 8),
         cfg(128, 128, 64, 5, 4), cfg(128, 64, 64, 4, 4), cfg(64, 128, 64, 4, 4), cfg(64, 64, 128, 4, 4)]
EXTRA = [cfg(256, 128, 64, 3, 8), cfg(128, 128, 64, 4, 8), cfg(128, 128, 128, 3, 8), cfg(128, 128, 64, 6, 4),
         cfg(64, 256, 64, 4, 4), cfg(128, 256, 32, 6, 8)]


def name(c):
    return f"{c['BLOCK_M']}x{c['BLOCK_N']}x{c['BLOCK_K']} s{c['num_stages']} w{c['num_warps']} g{c['GROUP_M']}"


def operands(M, N, K, layout, n):
    out = []
    for _ in range(n):
        a = torch.randn(M, K, device="cuda", dtype=dt)
        b = torch.randn(N, K, device="cuda", dtype=dt).T if layout == "NT" else torch.randn(K, N, device="cuda", dtype=dt)
        out.append((a, b))
    return out


def graph_of(fn, sets):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for ops in sets:
            fn(*ops)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for ops in sets:
            fn(*ops)
    return g


def timed(graphs: dict, per: dict, rounds=3) -> dict:
    t = {k: [] for k in graphs}
    for _ in range(rounds):
        for k, g in graphs.items():
            t[k].append(triton.testing.do_bench(g.replay, warmup=10, rep=40, return_mode="median") / per[k])
    return {k: statistics.median(v) * 1e3 for k, v in t.items()}


def part1(shapes):
    plan.TMA_MIN_MACS = 0
    for M, N, K, layout in shapes:
        n = copies((M * K + K * N) * 2)
        sets = operands(M, N, K, layout, n)
        out = torch.empty(M, N, device="cuda", dtype=dt)
        graphs, per = {}, {}
        graphs["torch"], per["torch"] = graph_of(lambda a, b: torch.mm(a, b, out=out), sets), n
        for c in SPACE + EXTRA:
            fn = (lambda c: lambda a, b: tritonmm.mm(a, b, out=out, config=c))(c)
            try:
                fn(*sets[0])
                graphs["S " + name(c)], per["S " + name(c)] = graph_of(fn, sets), n
                graphs["T " + name(c)], per["T " + name(c)] = graph_of(fn, [sets[0]] * n), n
            except Exception as e:  # noqa: BLE001
                print(f"{name(c)}: {type(e).__name__} {str(e)[:80]}")
        us = timed(graphs, per)
        cfgs = [name(c) for c in SPACE + EXTRA if "S " + name(c) in us]
        rank_t = sorted(cfgs, key=lambda c: us["T " + c])
        rows = [[c + (" *" if c in map(name, EXTRA) else ""), f"{us['S ' + c]:.1f}", f"{us['torch'] / us['S ' + c]:.2f}",
                 f"{us['T ' + c]:.1f}", rank_t.index(c) + 1] for c in sorted(cfgs, key=lambda c: us["S " + c])]
        print(f"\n== {M}x{N}x{K} {layout}, {n} copies: torch.mm {us['torch']:.1f} us; tuner's pick: {rank_t[0]}")
        print(tabulate(rows, headers=["config (* not in space)", "sweep us", "x cuBLAS", "tuner us", "tuner rank"]))
        sys.stdout.flush()
        del sets, graphs


def part2(shapes):
    plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = 0, 0
    rows = []
    for M, N, K, big, tails in shapes:
        n = copies((M * K + K * N) * 2)
        sets = operands(M, N, K, "NN", n)
        out = torch.empty(M, N, device="cuda", dtype=dt)
        graphs, per = {"torch": graph_of(lambda a, b: torch.mm(a, b, out=out), sets)}, {"torch": n}
        graphs["whole"], per["whole"] = graph_of(lambda a, b: tritonmm.mm(a, b, out=out, config=big), sets), n
        per_row = triton.cdiv(N, big["BLOCK_N"])
        waves = max(1, triton.cdiv(M, big["BLOCK_M"]) * per_row // SMS)  # whole waves of the persistent grid
        M1 = min(M, waves * SMS // per_row * big["BLOCK_M"])  # rows whose tiles fill them
        for t in tails:
            def fn(a, b, t=t):
                tritonmm.mm(a[:M1], b, out=out[:M1], config=big)
                tritonmm.mm(a[M1:], b, out=out[M1:], config=t)
            fn(*sets[0])
            ref = sets[0][0].float() @ sets[0][1].float()
            err = ((out.float() - ref).norm() / ref.norm()).item()
            assert err < 1e-2, err
            graphs["tail " + name(t)], per["tail " + name(t)] = graph_of(fn, sets), n
        us = timed(graphs, per)
        for k, v in us.items():
            rows.append([f"{M}x{N}x{K}", name(big), M1, k, f"{v:.1f}", f"{us['torch'] / v:.2f}"])
        print(tabulate(rows[-len(us):], headers=["shape", "big", "M1", "variant", "us", "x cuBLAS"]))
        sys.stdout.flush()
    return rows


if __name__ == "__main__":
    part2([
        (3072, 3072, 3072, cfg(128, 256, 64, 4, 8), [cfg(64, 128, 64, 4, 4), cfg(128, 128, 64, 5, 4), cfg(64, 64, 128, 4, 4)]),
        (3000, 3008, 3000, cfg(128, 256, 64, 4, 8), [cfg(64, 128, 64, 4, 4), cfg(128, 128, 64, 5, 4), cfg(64, 64, 128, 4, 4)]),
        (2560, 2560, 2560, cfg(128, 256, 64, 4, 8), [cfg(64, 128, 64, 4, 4), cfg(64, 64, 128, 4, 4)]),
        (1536, 1536, 1536, cfg(128, 128, 64, 4, 8), [cfg(64, 64, 128, 4, 4), cfg(64, 128, 64, 4, 4)]),
        (1536, 1536, 1536, cfg(128, 128, 64, 5, 4), [cfg(64, 64, 128, 4, 4)]),
        (6144, 6144, 6144, cfg(128, 256, 64, 4, 8), [cfg(64, 128, 64, 4, 4), cfg(128, 128, 64, 5, 4)]),
    ])
    part1([(1536, 1536, 1536, "NN"), (3072, 3072, 3072, "NN"), (3000, 3008, 3000, "NN"), (4096, 4096, 4096, "NN"),
           (4096, 4096, 4096, "NT"), (1024, 14336, 4096, "NT"), (4096, 4096, 4000, "NN"), (512, 4096, 14336, "NT")])
