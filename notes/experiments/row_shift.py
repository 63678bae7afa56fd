"""Experiment (session 23, run 1): the TMA kernel's last row and column of tiles moved back inside C (SHIFT).

Session 22 (run 9) found TMA's zero fill of box rows past an operand's end costs about as much as reading them,
or more: the same 64x64x128 config ran 12x5120x5120 in 32.1 us and 52x5120x5120 in 24.0. Products whose last row
or column of tiles is mostly past C's edge pay that on every K step of those tiles, and those tiles are the
wave's stragglers: 141x3072x8192 x @ W.T (13 real rows in its last 64-row tile) ran 0.76x cuBLAS in seed 9's draw.
With SHIFT the last tile starts at C's edge minus the tile (rounded up to 16 elements, as TMA boxes start aligned):
its box holds real rows that the tile before it also computes, and stores again, bit for bit the same.

Hypothesis: SHIFT gains 5% or more where the last row or column of tiles is mostly empty (141x3072x8192,
1027x3072x3072, 6912x1104x464) and costs nothing where C divides into tiles (4096^3).

Per shape (bf16, the sweep's operands and copies): every candidate of the captured plan timed cold (a graph over
operand copies rotated past the L2, bench.common.device_ms) with SHIFT on and off, and each config's two outputs
compared bit for bit. Reports torch.mm, the best candidate under each, and the tuner's pick (tuned with SHIFT on).

    PYTHONPATH=. python3 notes/experiments/row_shift.py [MxNxK:layout ...]
"""
import os
import sys
import tempfile
import time

os.environ.setdefault("TRITONMM_CACHE_DIR", tempfile.mkdtemp())

import torch  # noqa: E402
from tabulate import tabulate  # noqa: E402

from bench.common import config_text, device_ms  # noqa: E402
from bench.sweep import _graph  # noqa: E402
from cold_tuning import cold_setup, shapes  # noqa: E402
from tritonmm import plan, tuning  # noqa: E402

SHAPES = [(141, 3072, 8192, "NT"), (1027, 3072, 3072, "NT"), (6912, 1104, 464, "NN"), (2113, 5120, 5120, "NT"),
          (1280, 928, 416, "NN"), (3000, 3008, 3000, "NN"), (2838, 3072, 8192, "NT"), (7232, 256, 3616, "NN"),
          (100, 4096, 4096, "NT"), (4096, 4096, 4096, "NN")]


def unshifted(steps):
    return [(k, g, a, dict(c, SHIFT=False) if k is plan.gemm_tma_kernel else c, o) for k, g, a, c, o in steps]


table = []
for M, N, K, layout in shapes(sys.argv[1:], SHAPES):
    start = time.time()
    sets, out, torch_g, tuned, path, products = cold_setup(M, N, K, layout)
    n = len(sets)
    times, keep, differ = {}, [], 0
    for cfg in products[0].candidates():
        try:
            products[0].run(cfg)
        except tuning._UNRUNNABLE:
            continue
        results = []
        for shift in (True, False):
            steps = [p.steps(cfg) if shift else unshifted(p.steps(cfg)) for p in products]
            out.fill_(float("nan"))
            for s in steps[0]:
                plan.launch_step(s)
            results.append(out.clone())
            keep.append(steps)  # workspaces and descriptors live as long as the graphs
            g = _graph(lambda i: [plan.launch_step(s) for s in steps[i]], [(i,) for i in range(n)])
            times[cfg, shift] = device_ms(g.replay) / n
        differ += not torch.equal(results[0], results[1])
    base = device_ms(torch_g.replay) / n
    best = {s: min((c for c, t in times if t == s), key=lambda c: times[c, s]) for s in (True, False)}
    row = [f"{M}x{N}x{K} {layout}", n, path, len(times) // 2, differ, f"{base * 1e3:.2f}",
           f"{config_text(best[False])} {base / times[best[False], False]:.3f}",
           f"{config_text(best[True])} {base / times[best[True], True]:.3f}",
           f"{config_text(tuned)} {base / times.get((tuned, False), float('nan')):.3f} -> "
           f"{base / times.get((tuned, True), float('nan')):.3f}"]
    table.append(row)
    print(" | ".join(map(str, row)), f"({time.time() - start:.0f} s)", flush=True)
    for cfg, shift in sorted(times, key=times.get)[:12]:
        print(f"    {config_text(cfg)} shift={int(shift)}: {times[cfg, shift] * 1e3:.2f} us", flush=True)
    del keep, products, sets
print(tabulate(table, headers=["shape", "copies", "path", "configs", "differ", "torch.mm us", "best unshifted x",
                               "best shifted x", "tuner's pick x (off -> on)"], disable_numparse=True))
