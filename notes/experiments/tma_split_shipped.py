"""Experiment (session 20, run 2): the TMA split-K rule as shipped (config_space.tma_split_for), tuned cold,
against the same library with no TMA split offered (TMA_SPLIT_MAX_WORKSPACE = 0), on the two shapes run 1
measured the rule on and on shapes it has not seen. bench/sweep.py's measure (graph replay over operand copies
rotated past the L2, eager calls too, 3 rounds interleaved with torch.mm), a fresh tuning cache per setting.

    PYTHONPATH=. python3 notes/experiments/tma_split_shipped.py [MxNxK:layout ...]

Session 22 (run 10): RULE=short measures config_space's short tiles the same way, as shipped against none
(SHORT_MAX_ROWS = 0), on the decode products run 9 found them faster on and on shapes it has not seen.

    RULE=short PYTHONPATH=. python3 notes/experiments/tma_split_shipped.py [MxNxK:layout ...]
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
# (the constant that turns the rule off at 0, what "off" is called)
CONSTANT, OFF = {"tma_split": ("TMA_SPLIT_MAX_WORKSPACE", "no TMA split"),
                 "short": ("SHORT_MAX_ROWS", "no short tiles")}[RULE]
if RULE == "short":
    SHAPES = [(12, 5120, 5120, "NT"), (14, 8192, 8192, "NT"), (16, 14336, 4096, "NT"), (32, 5120, 13824, "NT"),
              (8, 13824, 5120, "NT"), (24, 28672, 8192, "NT"), (20, 3072, 8192, "NT"), (30, 6144, 2048, "NT"),
              (16, 8192, 8192, "NN"), (48, 5120, 5120, "NT")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
SHIPPED = getattr(config_space, CONSTANT)

results = {}
for label, bar in ((OFF, 0), ("shipped", SHIPPED)):
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
