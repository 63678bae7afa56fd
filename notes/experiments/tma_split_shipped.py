"""Experiment (session 20, run 2): the TMA split-K rule as shipped (config_space.tma_split_for), tuned cold,
against the same library with no TMA split offered (TMA_SPLIT_MAX_WORKSPACE = 0), on the two shapes run 1
measured the rule on and on shapes it has not seen. bench/sweep.py's measure (graph replay over operand copies
rotated past the L2, eager calls too, 3 rounds interleaved with torch.mm), a fresh tuning cache per setting.

    PYTHONPATH=. python3 notes/experiments/tma_split_shipped.py [MxNxK:layout ...]

Session 22 (run 10): RULE=short measures config_space's short tiles the same way, as shipped against none
(SHORT_MAX_ROWS = 0), on the decode products run 9 found them faster on and on shapes it has not seen.

    RULE=short PYTHONPATH=. python3 notes/experiments/tma_split_shipped.py [MxNxK:layout ...]

Session 23 (run 2): RULE=span measures the TMA split rule that slices K where that cuts the busiest SM's K steps
by a fifth or more (config_space.tma_split_for, TMA_SPLIT_MAX_SPAN) against session 20's, which sliced only to
fill 90% of the units' waves (fill_rule below), on under-filled products where the two offer different slices.

    RULE=span PYTHONPATH=. python3 notes/experiments/tma_split_shipped.py [MxNxK:layout ...]
"""
import os
import sys
import tempfile

from tabulate import tabulate

from tritonmm import config_space, plan, tuning
from bench import sweep

SHAPES = [(134, 5120, 13824, "NT"), (288, 8192, 28672, "NT"),  # run 1's
          (128, 4096, 14336, "NT"), (100, 8192, 8192, "NT"), (160, 5120, 13824, "NT"), (200, 8192, 28672, "NT"),
          (64, 8192, 8192, "NN"), (8192, 64, 8192, "NN")]
RULE = os.environ.get("RULE", "tma_split")
if RULE == "short":
    SHAPES = [(12, 5120, 5120, "NT"), (14, 8192, 8192, "NT"), (16, 14336, 4096, "NT"), (32, 5120, 13824, "NT"),
              (8, 13824, 5120, "NT"), (24, 28672, 8192, "NT"), (20, 3072, 8192, "NT"), (30, 6144, 2048, "NT"),
              (16, 8192, 8192, "NN"), (48, 5120, 5120, "NT")]
if RULE == "span":
    SHAPES = [(141, 3072, 8192, "NT"), (100, 4096, 4096, "NT"), (180, 4096, 11008, "NT"), (300, 3072, 12288, "NT"),
              (134, 5120, 13824, "NT"), (250, 6144, 4096, "NT"), (90, 3072, 6144, "NT"), (64, 8192, 8192, "NN")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]


def fill_rule(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, elem_bytes, num_sms):
    """Session 20's tma_split_for: the fewest slices whose units fill 90% of their waves, where the whole
    tiles fill less (the same limits on a slice's K steps and the workspace)."""
    def fill(units):
        return units / (num_sms * config_space.cdiv(units, num_sms))
    tiles = config_space.cdiv(M, BLOCK_M) * config_space.cdiv(N, BLOCK_N)
    if fill(tiles) >= 0.9:
        return 1
    for split in range(2, config_space.MAX_SPLIT_K + 1):
        if config_space.cdiv(K, BLOCK_K) // split < config_space.TMA_SPLIT_MIN_STEPS or \
                split * M * N * 4 > config_space.TMA_SPLIT_MAX_WORKSPACE * (M + N) * K * elem_bytes:
            return 1
        if fill(tiles * split) >= 0.9:
            return split
    return 1


# per rule: (what "off" is called, the module attribute it sets, its value off, its value as shipped)
OFF, CONSTANT, OFF_VALUE, SHIPPED = {
    "tma_split": ("no TMA split", "TMA_SPLIT_MAX_WORKSPACE", 0, config_space.TMA_SPLIT_MAX_WORKSPACE),
    "short": ("no short tiles", "SHORT_MAX_ROWS", 0, config_space.SHORT_MAX_ROWS),
    "span": ("fill rule", "tma_split_for", fill_rule, config_space.tma_split_for)}[RULE]

results = {}
for label, bar in ((OFF, OFF_VALUE), ("shipped", SHIPPED)):
    setattr(config_space, CONSTANT, bar)
    os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
    tuning.forget()
    plan._compiled.clear()
    for row in sweep.measure("bf16", SHAPES, rounds=3):
        results.setdefault(f"{row['shape']} {row['layout']}", {})[label] = row
        print(label, row["shape"], row["layout"], f"{row['ratio_graph']:.3f}", row["config"], flush=True)
table = []
for shape, by in results.items():
    off, on = by[OFF], by["shipped"]
    table.append([shape, f"{off['torch_graph_us']:.1f}", f"{off['ratio_graph']:.2f} ({off['config']})",
                  f"{on['torch_graph_us']:.1f}", f"{on['ratio_graph']:.2f} ({on['config']})",
                  f"{off['ratio_eager']:.2f} / {on['ratio_eager']:.2f}"])
print(tabulate(table, headers=["shape", "torch us", f"{OFF}: x graph (config)", "torch us",
                               "shipped: x graph (config)", "x eager off / on"]))
