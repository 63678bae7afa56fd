"""Experiment (session 18, run 3): where the split tail's time goes.

Run 2 (split_tail.py) measured 1536^3 on 128x128x64 s5 at 21.6 us with a split tail (132 whole tiles, 12 more in
6 slices each), where the same tiles without one take two rounds (~18.6 us, session 13) and the prediction was
13-14 us. Each part timed alone in graph replay (operands rotated past the L2), us: the plain kernel; the kernel
compiled with SPLIT_TAIL but every tile whole (whole = tiles: what the split's code costs the whole tiles); the
split kernel alone (whole tiles and slices); the second pass alone; both.

Runs at 2f2c759 (the split tail was taken out of the library after run 5; NOTES.md, session 18):

    git checkout 2f2c759 && PYTHONPATH=. python3 notes/experiments/split_tail_parts.py
"""
import torch
from tabulate import tabulate

from tritonmm import config_space, timing
from tritonmm.kernels.gemm_tma import fit_descriptors, gemm_tma_kernel
from tritonmm.plan import Product
from bench.common import copies
from bench.sweep import _operands

SHAPES = [(1536, 1536, 1536, "NN", (128, 128, 64, 5, 4)), (842, 3072, 3072, "NT", (128, 128, 64, 5, 4)),
          (944, 5216, 976, "NN", (128, 256, 64, 3, 8)), (1672, 3072, 8192, "NT", (128, 256, 64, 3, 8))]


def launch(step):
    kernel, grid, args, constants, options = step
    if kernel is gemm_tma_kernel:
        fit_descriptors(dict(zip(kernel.arg_names, args), **constants))
    kernel[grid](*args, **constants, **options)


rows = []
for M, N, K, layout, t in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
    ps = [Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
    plain, split = config_space.make_config(*t), config_space.make_config(*t, TAIL=config_space.TAIL_SPLIT)
    plain_steps = [p.steps(plain)[0] for p in ps]
    split_steps = [p.steps(split) for p in ps]
    tiles = -(-M // t[0]) * -(-N // t[1])
    all_whole = []
    for (kernel, grid, args, constants, options) in (s[0] for s in split_steps):
        args = list(args)
        args[-2], args[-1] = tiles, 1  # whole = every tile, split 1: no slices
        all_whole.append((kernel, (min(tiles, 132),), tuple(args), constants, options))
    parts = {
        "plain": lambda: [launch(s) for s in plain_steps],
        "split code, all whole": lambda: [launch(s) for s in all_whole],
        "split kernel": lambda: [launch(s[0]) for s in split_steps],
        "second pass": lambda: [launch(s[1]) for s in split_steps],
        "both": lambda: [(launch(s[0]), launch(s[1])) for s in split_steps],
    }
    us = {k: timing.median_ms(fn, rep_ms=25, graph=True) / len(ps) * 1e3 for k, fn in parts.items()}
    us2 = {k: timing.median_ms(fn, rep_ms=25, graph=True) / len(ps) * 1e3 for k, fn in parts.items()}
    rows.append([f"{M}x{N}x{K} {layout}", "x".join(map(str, t)), tiles, ps[0].split_tail(split)]
                + [f"{min(us[k], us2[k]):.2f}" for k in parts])
    print(rows[-1], flush=True)
    del ps, sets, outs
print(tabulate(rows, headers=["shape", "tile", "tiles", "(whole, split)", *parts]))
