"""Experiment (session 7): what split-K costs a decode product's eager call, against one launch.

Session 6 (run 6) measured tuned decode products at 1.86-2.07x torch.mm's eager time per call after
tuning moved to graph replay (split-K 8: two launches) and 0.91-0.98x in session 5 (one launch).
Here each config is put into the tuning memory as if tuned, then timed three ways: eager wall time
per call (host_us_per_call, weights rotated past the L2), graph replay (device time), and cProfile of
the eager call's top functions for the split-K config.

    PYTHONPATH=. python3 notes/experiments/decode_host.py
"""
import cProfile
import itertools
import pstats

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import config_space, plan, timing, tuning
from bench.common import copies

dt = torch.bfloat16
rows = []
for M, N, K in ((1, 4096, 4096), (16, 4096, 4096), (1, 4096, 14336), (64, 4096, 4096)):
    n = copies(N * K * 2)
    sets = [(torch.randn(M, K, device="cuda", dtype=dt), torch.randn(N, K, device="cuda", dtype=dt).T) for _ in range(n)]
    out = torch.empty(M, N, device="cuda", dtype=dt)
    tritonmm.mm(*sets[0], out=out)  # tunes
    product = plan.Product(sets[0][0], sets[0][1], out, "native")
    key = product.tuning_key
    tuned = tuning._memory[key]
    cands = [tuned] + [config_space.make_config(64, 128, 64, 4, 4, SPLIT_K=s) for s in (1, 2, 4, 8)] + \
        [config_space.make_config(64, 64, 128, 4, 4, SPLIT_K=s) for s in (1, 4)]
    cycle = itertools.cycle(sets)

    def call():
        a, b = next(cycle)
        tritonmm.mm(a, b, out=out)

    def graph_us(mm=tritonmm.mm):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for a, b in sets:
                mm(a, b, out=out)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for a, b in sets:
                mm(a, b, out=out)
        return timing.median_ms(g.replay) * 1e3 / n

    torch_host = timing.host_us_per_call(lambda: torch.mm(*next(cycle), out=out))
    for i, c in enumerate(cands):
        tuning._remember(key, c)
        call()
        host = timing.host_us_per_call(call)
        rows.append([f"{M}x{N}x{K}", ("tuned " if i == 0 else "") + str(config_space.as_list(c)), f"{host:.1f}",
                     f"{host / torch_host:.2f}", f"{graph_us():.1f}"])
        if i == 0 and config_space.split_k(c) > 1 and M == 1:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(2000):
                call()
            torch.cuda.synchronize()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(14)
    rows.append([f"{M}x{N}x{K}", "torch.mm", f"{torch_host:.1f}", "1.00", f"{graph_us(torch.mm):.1f}"])
    tuning._remember(key, tuned)
print(tabulate(rows, headers=["shape", "config [BM,BN,BK,G,w,s,split]", "eager us/call", "x torch.mm", "graph us"]))
