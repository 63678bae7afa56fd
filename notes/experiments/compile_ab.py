"""Experiment (session 8): the compile suite's block, eager against compiled, with and without the rule
that leaves split-K products to the planner in graphs (plan._runs_opaque), in one process, rounds
interleaved. Runs 3 and 4 measured the compiled block at M = 16 at 0.92x and 0.66x eager, before and
after that rule, with the host ~1.5x slower in run 4 throughout (the same calls under cProfile).

    PYTHONPATH=. python3 notes/experiments/compile_ab.py
"""
import statistics

import torch
from tabulate import tabulate

import tritonmm
from bench.common import interleaved_times
from tritonmm import plan, timing


def block(x, w1, b1, w2):
    return x + tritonmm.matmul(tritonmm.linear(x, w1, b1, "gelu_tanh"), w2.T)


def block_b(x, w1, b1, w2):  # the same, as a code object of its own: dynamo caches graphs per code object
    return x + tritonmm.matmul(tritonmm.linear(x, w1, b1, "gelu_tanh"), w2.T)


rule = plan._runs_opaque


def tma_only(a, b):
    """The rule before session 8: only products on the TMA path are opaque."""
    facts = plan.device.facts(a.device)
    if a.dim() == 2 and plan._few_tiles(facts, plan._hint(a.shape[0]), plan._hint(b.shape[1])):
        return False
    return rule(a, b)


def compiled_with(fn, opaque):
    plan._runs_opaque = opaque
    return torch.compile(fn, fullgraph=True)


rows = []
s = torch.randn(64, 64, device="cuda").bfloat16()
print(f"host us a call, torch.mm 64^3: {timing.host_us_per_call(lambda: torch.mm(s, s)):.1f}", flush=True)
with torch.no_grad():
    for M, width in ((16, 4096), (128, 4096)):
        x = torch.randn(M, width, device="cuda").bfloat16()
        w1 = (torch.randn(4 * width, width, device="cuda") / width ** 0.5).bfloat16()
        b1 = torch.randn(4 * width, device="cuda").bfloat16()
        w2 = (torch.randn(width, 4 * width, device="cuda") / (4 * width) ** 0.5).bfloat16()
        fns = {"eager": lambda: block(x, w1, b1, w2)}
        torch._dynamo.reset()
        for name, fn, opaque in (("compiled, split-K opaque", block, rule), ("compiled, split-K traced", block_b, tma_only)):
            fn = compiled_with(fn, opaque)
            fn(x, w1, b1, w2)  # compiles under this rule
            fns[name] = (lambda f: lambda: f(x, w1, b1, w2))(fn)
        plan._runs_opaque = rule
        times = {k: statistics.median(v) for k, v in interleaved_times(fns, 5).items()}
        host = {k: timing.host_us_per_call(f, 1000) for k, f in fns.items()}
        for k in fns:
            rows.append([M, k, f"{times[k] * 1e3:.1f}", f"{times['eager'] / times[k]:.2f}", f"{host[k]:.1f}"])
            print(*rows[-1], flush=True)
print(f"host us a call, torch.mm 64^3: {timing.host_us_per_call(lambda: torch.mm(s, s)):.1f}")
print(tabulate(rows, headers=["M", "impl", "do_bench us", "x eager", "host us a call"]))
