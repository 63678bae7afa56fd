"""Experiment (session 7): which products of TinyGPT w2048's training step run slow under tritonmm.

Run 6 measured the w2048 step at 0.70x aten with swap_linears (session 6: 0.93) and 0.88x under
use_tritonmm (0.98). Here: every distinct product one swapped step runs (recorded at plan.product),
each re-run alone on fresh operands of the same shape and strides, tritonmm against torch (matmul,
bias, activation) by do_bench medians, with the path and config the planner chose; then the same
with the session's tuning changes undone (whole-octave buckets, no wave-tail variants).

    PYTHONPATH=. python3 notes/experiments/model_products.py
"""
import collections

import torch
import torch.nn.functional as F
import triton
from tabulate import tabulate

import tritonmm
from tritonmm import cache, config_space, plan, tuning
from bench.model import TinyGPT, make_batch

torch.manual_seed(0)
model = TinyGPT(vocab=8192, width=2048, heads=32, layers=2, seq=512).cuda().bfloat16()
tritonmm.nn.swap_linears(model)
idx, targets = make_batch(8, 512, 8192, "cuda", torch.Generator().manual_seed(1))
seen = collections.OrderedDict()
product = plan.product


def spy(a, b, **kw):
    bias = kw.get("bias")
    key = (tuple(a.shape), a.stride(), tuple(b.shape), b.stride(), None if bias is None else (tuple(bias.shape), bias.stride()),
           kw.get("activation", "none"))
    seen[key] = seen.get(key, 0) + 1
    return product(a, b, **kw)


def step():
    model.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(idx).float().flatten(0, 1), targets.flatten())
    loss.backward()


step()
plan.product = spy
step()
plan.product = product


def strided(shape, stride):
    base = torch.randn(sum((n - 1) * s for n, s in zip(shape, stride)) + 1, device="cuda").bfloat16()
    return base.as_strided(shape, stride)


def measure(label):
    rows = []
    for (ash, ast, bsh, bst, bias, act), count in seen.items():
        a, b = strided(ash, ast), strided(bsh, bst)
        bias_t = None if bias is None else strided(*bias)
        ours = lambda: plan.product(a, b, precision="native", bias=bias_t, activation=act)  # noqa: E731
        ref = lambda: plan.epilogue_reference(a @ b, bias_t, act)  # noqa: E731
        ours()
        cfg, path = plan.chosen(a, b, "native", bias_t, act)
        t_ours = triton.testing.do_bench(ours, return_mode="median")
        t_ref = triton.testing.do_bench(ref, return_mode="median")
        layout = plan._layout(a) + plan._layout(b)
        rows.append([label, f"{ash[-2]}x{bsh[-1]}x{ash[-1]}" + ("" if len(ash) == 2 else f" z{ash[0]}"), layout,
                     "" if bias is None else "bias", act, count, f"{t_ref * 1e3:.1f}", f"{t_ours * 1e3:.1f}",
                     f"{t_ref / t_ours:.2f}", path, str(config_space.as_list(cfg))])
    return rows


rows = measure("final")
config_space.TAIL_MAX_FILL = -1  # no wave-tail variants
config_space.tuning_bucket = cache.tuning_bucket = config_space.bucket  # whole-octave buckets
tuning.forget()
plan._compiled.clear()
rows += measure("undone")
print(tabulate(rows, headers=["code", "MxNxK", "layout", "bias", "act", "calls", "torch us", "tritonmm us", "x torch",
                              "path", "config"]))
