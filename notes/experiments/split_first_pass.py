"""Experiment (session 25, run 1): what would an in-kernel fix-up of split-K buy?

Split-K runs two launches: the slices' fp32 partial sums into a workspace, then kernels/split_k.py's ordered sum with
the epilogue. Session 21 (run 4) measured the second pass at 1.4-2.4 us of a split call in graph replay, and guessed
that without it 12x5120x5120 would reach 0.98-0.99x cuBLAS. A fix-up inside the first launch (the last slice of a
tile to finish adds the others' sums in slice order: deterministic, no waiting) would cost a few reads of small fp32
tiles instead of a launch. Its bound is the first launch alone.

Hypothesis: on the open decode and few-row products (48-64 rows against 5120^2 at 0.94-0.95x cuBLAS; 100-141 rows
against 3072-4096-wide weights at 0.80-0.92), some split config's first launch alone runs at 1.0x cuBLAS or better,
cold, where the best whole candidate does not. If no first launch gets there, the fix-up cannot, and is not built.

Per shape (bf16, the sweep's operands and copies, graph replay over copies rotated past the L2, read-flushed):
torch.mm; every candidate of the captured plan and the split configs of SPLITS, whole; each split config's first
launch alone (the partial sums only: the result is not finished, timing only).

    PYTHONPATH=. python3 notes/experiments/split_first_pass.py [MxNxK:layout ...]
"""
import sys

from tabulate import tabulate

from bench.common import config_text, device_ms
from bench.sweep import _graph
from tritonmm import config_space, plan, tuning

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from cold_tuning import cold_setup, shapes  # noqa: E402

SHAPES = [(48, 5120, 5120, "NT"), (64, 5120, 5120, "NT"), (52, 5120, 5120, "NT"), (64, 8192, 8192, "NN"),
          (40, 4096, 4096, "NT"), (100, 4096, 4096, "NT"), (141, 3072, 8192, "NT"), (128, 4096, 4096, "NT"),
          (473, 5120, 5120, "NT"), (1536, 1536, 1536, "NN")]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, SPLIT_K): narrow tiles in 2-6 slices
SPLITS = [(64, 64, 128, 4, 4, s) for s in (2, 3, 4)] + [(64, 128, 128, 4, 4, s) for s in (2, 3, 4, 6)] + \
    [(64, 128, 64, 6, 4, s) for s in (2, 3)] + [(128, 128, 64, 5, 4, s) for s in (2, 3)] + \
    [(64, 32, 256, 4, 4, s) for s in (2, 3)] + [(128, 256, 64, 4, 8, 2)]


def main():
    table = []
    for M, N, K, layout in shapes(sys.argv[1:], SHAPES):
        sets, out, torch_g, tuned, path, products = cold_setup(M, N, K, layout)
        n = len(sets)
        whole, first, keep = {}, {}, []
        candidates = products[0].candidates()
        pinned = [config_space.make_config(*t[:5], SPLIT_K=t[5]) for t in SPLITS]
        for cfg in candidates + [c for c in pinned if c not in candidates]:
            try:
                products[0].run(cfg)
            except tuning._UNRUNNABLE:
                continue
            steps = [p.steps(cfg) for p in products]
            keep.append(steps)  # workspaces and descriptors live as long as the graphs
            g = _graph(lambda i: [plan.launch_step(s) for s in steps[i]], [(i,) for i in range(n)])
            whole[cfg] = device_ms(g.replay) / n
            if products[0].split(cfg) > 1:
                g1 = _graph(lambda i: plan.launch_step(steps[i][0]), [(i,) for i in range(n)])
                first[cfg] = device_ms(g1.replay) / n
        base = device_ms(torch_g.replay) / n
        best = min(whole, key=whole.get)
        best_first = min(first, key=first.get, default=None)
        row = [f"{M}x{N}x{K} {layout}", n, path, f"{base * 1e3:.2f}",
               f"{config_text(tuned)} {base / whole.get(tuned, float('nan')):.2f}",
               f"{config_text(best)} {base / whole[best]:.2f}",
               "-" if best_first is None else
               f"{config_text(best_first)} {base / first[best_first]:.2f} (whole {base / whole[best_first]:.2f})"]
        table.append(row)
        print(" | ".join(map(str, row)), flush=True)
        for cfg in sorted(whole, key=whole.get):
            extra = f", first launch {first[cfg] * 1e3:.2f} us" if cfg in first else ""
            print(f"    {config_text(cfg)}{' (candidate)' if cfg in candidates else ''}: "
                  f"{whole[cfg] * 1e3:.2f} us{extra}", flush=True)
        del keep, products, sets
    print(tabulate(table, headers=["shape", "copies", "path", "torch.mm us", "tuner's pick x", "best whole x",
                                   "best first launch alone x"], disable_numparse=True))


if __name__ == "__main__":
    main()
