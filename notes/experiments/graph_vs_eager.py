"""Experiment (session 16, run 5): small products that run slower in a CUDA graph than eagerly.

Session 16's draw with seed 4 ran 97x70x786 x @ W.T at 20.0 us a call in graph replay, and 15.3 us a call
eagerly (wall time of back-to-back calls, host included): the graph's plan must differ from the eager one.
Per shape: the eager and the captured plan (Product(captured=True), as inside capture) with their paths,
stagers and tuned configs; the graph time of tritonmm.matmul as the sweep captures it, of each plan's run()
under its config, and the eager wall time. Operand copies rotated as the sweep does.

    PYTHONPATH=. python3 notes/experiments/graph_vs_eager.py
"""
import itertools

import torch

import tritonmm
from tritonmm import plan, timing, tuning
from bench.common import copies
from bench.sweep import _graph, _operands

for M, N, K, layout in [(97, 70, 786, "NT"), (148, 230, 4771, "NT"), (107, 85, 1851, "NN"), (93, 529, 6074, "NT"),
                        (1264, 304, 2864, "NT")]:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    call = lambda a, b: tritonmm.matmul(a, b, out=out)  # noqa: E731
    call(*sets[0])
    call(*sets[0])
    g = _graph(call, sets)
    g.replay()
    torch.cuda.synchronize()
    graph_us = timing.median_ms(g.replay) / len(sets) * 1e3
    cycle = itertools.cycle(sets)
    eager_us = timing.host_us_per_call(lambda: call(*next(cycle)), calls=2000)
    print(f"{M}x{N}x{K} {layout}: matmul graph {graph_us:.2f} us, eager wall {eager_us:.2f} us", flush=True)
    for captured in (False, True):
        products = [plan.Product(a, b, out, "native", captured=captured) for a, b in sets]
        p = products[0]
        cfg = tuning.choose_config(p)
        k = cfg.kwargs
        run_us = timing.median_ms(lambda: [q.run(cfg) for q in products], rep_ms=25, graph=True) / len(sets) * 1e3
        print(f"    captured={captured}: path {p.path} stagers {[s and s.__name__ for s in p.stagers]} "
              f"stage_c {p.stage_c} loads '{p.loads}' kernel K {p.args[8] if p.path == 'pointer' else K} "
              f"config {k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages} "
              f"split {k.get('SPLIT_K', 1)}: run() in a graph {run_us:.2f} us", flush=True)
