"""Experiment (session 22, run 3): does tuning on L2-warm operands pick slow configs for memory-bound products?

The tuner (tuning._time_all) times each candidate as a CUDA graph of repeated calls on the product's own
operands: a decode weight of 33-52 MB (4096^2-5120^2 bf16) sits wholly or mostly in the 50 MB L2 there, while a
model's layers, and the sweep's graphs, stream it from HBM. Run 2 (decode_paths.py) found 12x5120x5120 x @ W.T
tuned to an unsplit 64x128x128 at 0.91x cuBLAS; session 20's sweep had tuned it to 3 slices of K (0.895 there,
0.87 unsplit).

Hypothesis: ranked on cold operands, some decode products take another candidate that runs 3%+ faster under
rotation; compute-bound ones keep their pick.

Per shape (bf16, the sweep's operands and copies): every candidate of the captured plan timed two ways, the
tuner's (timing.median_ms(graph=True), one operand set, ranked by tuning.rank) and cold (a graph over the operand
copies rotated past the L2, bench.common.device_ms); torch.mm cold. Reports the tuner's pick, the warm-ranked
pick, and the best cold candidate, each as cold x torch.mm.

Run 4 (PINNED=1): also every config of PINNED (deeper pipelines on narrow tiles, more slices of K than the
split rules give) on products of at most 64 rows, timed cold beside the candidates. Hypothesis: at 12x5120x5120,
where the best candidate ran 0.87x cuBLAS, a 64x64 tile with a deeper pipeline or 5 slices of K reaches 0.95x.

Run 5 (PINNED=2): tiles of 16 and 32 rows instead. In run 3 the same 64x64x128 config took 32.1 us at
12x5120x5120 and 24.1 at 52x5120x5120: the same weight bytes, yet 12 rows ran 1.34x slower. Hypothesis: the TMA box
of x's 64 rows, 52 of them past the tensor's end at M = 12, costs the copy engine time to zero-fill; a 16-row
tile (tl.dot then runs mma.sync instead of wgmma, which a memory-bound product does not miss) fills 4 rows, leaves
room for deeper pipelines, and runs 12x5120x5120 at 0.95x cuBLAS or better.

    PYTHONPATH=. python3 notes/experiments/cold_tuning.py [MxNxK:layout ...]
    PINNED=1 PYTHONPATH=. python3 notes/experiments/cold_tuning.py [MxNxK:layout ...]

Session 23 (run 6, PINNED=3): products of 90-300 rows against a large weight, whose last tiles session 23 moved
back inside C (SHIFT) and which still ran 0.82-0.92x cuBLAS (141x3072x8192 0.82). The 64x128x128 tile there moved
about 100 GB/s into each of its 72 SMs, as did 128x128x64 on 48 SMs (run 1): each SM's bytes, not the HBM, seem to
bound it. Hypothesis: slicing K so that every SM gets work (2-6 slices of the narrow tiles) or a 256-row tile that
reads the weight once beats the tuner's pick by 5% or more cold; the span rule's splits (run 2) were ranked warm.

    PINNED=3 PYTHONPATH=. python3 notes/experiments/cold_tuning.py [MxNxK:layout ...]
"""
import os
import sys
import tempfile

os.environ.setdefault("TRITONMM_CACHE_DIR", tempfile.mkdtemp())

import torch  # noqa: E402
from tabulate import tabulate  # noqa: E402

import tritonmm  # noqa: E402
from bench.common import config_text, copies, device_ms  # noqa: E402
from bench.sweep import _graph, _operands  # noqa: E402
from tritonmm import config_space, plan, timing, tuning  # noqa: E402

SHAPES = [(12, 5120, 5120, "NT"), (52, 5120, 5120, "NT"), (16, 4096, 4096, "NT"), (64, 4096, 4096, "NT"),
          (14, 8192, 8192, "NT"), (57, 6144, 2048, "NT"), (40, 8192, 3072, "NT"), (784, 432, 2448, "NN"),
          (128, 4096, 14336, "NT")]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, SPLIT_K), for products of at most 64 rows (run 4)
PINNED = [(64, 64, 128, 5, 4, 1), (64, 64, 128, 6, 4, 1), (64, 64, 64, 8, 4, 1), (64, 64, 64, 10, 4, 1),
          (64, 128, 64, 8, 4, 1), (64, 32, 128, 8, 4, 1), (64, 64, 256, 3, 4, 1), (64, 64, 128, 4, 4, 2),
          (64, 64, 128, 5, 4, 3), (64, 64, 128, 5, 4, 5), (64, 128, 64, 6, 4, 2), (64, 128, 64, 6, 4, 4),
          (64, 128, 64, 6, 4, 5), (64, 64, 64, 8, 4, 4)] if os.environ.get("PINNED") == "1" else \
    [(16, 64, 128, 8, 4, 1), (16, 128, 128, 6, 4, 1), (16, 64, 256, 5, 4, 1), (16, 128, 64, 10, 4, 1),
     (16, 256, 64, 6, 4, 1), (16, 32, 256, 8, 4, 1), (32, 64, 128, 8, 4, 1), (32, 128, 128, 5, 4, 1),
     (16, 64, 128, 8, 4, 2), (16, 128, 128, 6, 4, 2), (64, 64, 128, 5, 4, 1)] if os.environ.get("PINNED") == "2" else \
    [(64, 128, 128, 4, 4, 2), (64, 128, 128, 4, 4, 3), (64, 128, 128, 4, 4, 4), (64, 128, 128, 4, 4, 6),
     (64, 64, 128, 4, 4, 2), (64, 64, 128, 4, 4, 3), (128, 128, 64, 5, 4, 2), (128, 128, 64, 5, 4, 3),
     (128, 256, 64, 4, 8, 3), (128, 256, 64, 4, 8, 5), (256, 128, 64, 4, 8, 1), (256, 64, 64, 4, 8, 1),
     (256, 128, 64, 4, 8, 3), (64, 256, 64, 4, 4, 3)] if os.environ.get("PINNED") == "3" else []
PINNED_MAX_ROWS = 512 if os.environ.get("PINNED") == "3" else 64


def shapes(argv, default):
    """MxNxK:layout arguments as (M, N, K, layout), or default."""
    return [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in argv] or default


def cold_setup(M, N, K, layout):
    """One bf16 product as the sweep times it: its operand copies (rotated past the L2), out, torch.mm's graph
    over them, the captured plan's (config, path) after tuning, and a captured Product per copy."""
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    torch_g = _graph(lambda a, b: torch.mm(a, b, out=out), sets)
    tritonmm.matmul(*sets[0], out=out)  # tunes the eager plan and its captured twin
    tuned, path = plan.chosen(*sets[0], "native", captured=True)
    return sets, out, torch_g, tuned, path, [plan.Product(a, b, out, "native", captured=True) for a, b in sets]


def main():
    table = []
    for M, N, K, layout in shapes(sys.argv[1:], SHAPES):
        sets, out, torch_g, tuned, path, products = cold_setup(M, N, K, layout)
        n = len(sets)
        warm, cold, keep = {}, {}, []
        candidates = products[0].candidates()
        pinned = [config_space.make_config(*t[:5], SPLIT_K=t[5]) for t in PINNED if M <= PINNED_MAX_ROWS]
        for cfg in candidates + [c for c in pinned if c not in candidates]:
            try:
                products[0].run(cfg)
            except tuning._UNRUNNABLE:
                continue
            if cfg in candidates:
                warm[cfg] = timing.median_ms(lambda: products[0].run(cfg), rep_ms=25, graph=True)
            steps = [p.steps(cfg) for p in products]
            keep.append(steps)  # workspaces and descriptors live as long as the graphs
            g = _graph(lambda i: [plan.launch_step(s) for s in steps[i]], [(i,) for i in range(n)])
            cold[cfg] = device_ms(g.replay) / n
        base = device_ms(torch_g.replay) / n
        warm_pick = tuning.rank(products[0], warm, True)
        cold_pick = min(warm, key=cold.get)
        pinned_pick = min((c for c in cold if c not in warm), key=cold.get, default=None)
        tuned_cold = cold.get(tuned) or float("nan")
        row = [f"{M}x{N}x{K} {layout}", n, path, len(cold), f"{base * 1e3:.2f}",
               f"{config_text(tuned)} {base / tuned_cold:.2f}",
               f"{config_text(warm_pick)} {base / cold[warm_pick]:.2f}",
               f"{config_text(cold_pick)} {base / cold[cold_pick]:.2f}",
               "-" if pinned_pick is None else f"{config_text(pinned_pick)} {base / cold[pinned_pick]:.2f}"]
        table.append(row)
        print(" | ".join(map(str, row)), flush=True)
        for cfg in sorted(cold, key=cold.get):  # all of them (runs 3-4 printed the first 6)
            print(f"    {config_text(cfg)}: cold {cold[cfg] * 1e3:.2f} us, " +
                  (f"warm {warm[cfg] * 1e3:.2f} us" if cfg in warm else "pinned"), flush=True)
        del keep, products, sets
    print(tabulate(table, headers=["shape", "copies", "path", "candidates", "torch.mm us", "tuner's pick x",
                                   "warm-ranked pick x", "best cold x",
                                   "best pinned x"], disable_numparse=True))


if __name__ == "__main__":
    main()
