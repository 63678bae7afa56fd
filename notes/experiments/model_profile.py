"""Experiment (session 8): where TinyGPT w2048's swapped training step loses to aten, and where the
compiled MLP block at M = 128 loses to eager (issue 9's two misses), under torch.profiler.

Session 7 measured the w2048 step at 0.70x aten with swap_linears and 0.88x under use_tritonmm, while
each of its products alone ran at 0.95-1.42x torch (model_products.py). Here, per variant: wall time a
step (synchronized, 10 steps), the GPU's busy time a step (sum of kernel times), and the kernels and
host ops that take the most time. Then the same for the compile suite's block at M = 128.

    PYTHONPATH=. python3 notes/experiments/model_profile.py
"""
import contextlib
import copy
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import tritonmm
from bench.model import TinyGPT, make_batch


def wall_ms(fn, n=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / n


def profiled(label, fn, steps=3):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            fn()
        torch.cuda.synchronize()
    events = prof.key_averages()
    busy = sum(e.self_device_time_total for e in events) / steps / 1e3
    print(f"\n=== {label}: wall {wall_ms(fn):.2f} ms a step, GPU busy {busy:.2f} ms a step ===", flush=True)
    print(events.table(sort_by="self_device_time_total", row_limit=14, max_name_column_width=70), flush=True)
    print(events.table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=70), flush=True)


torch.manual_seed(0)
base = TinyGPT(vocab=8192, width=2048, heads=32, layers=2, seq=512).cuda().bfloat16()
swapped = copy.deepcopy(base)
tritonmm.nn.swap_linears(swapped)
idx, targets = make_batch(8, 512, 8192, "cuda", torch.Generator().manual_seed(1))


def step(model, routed=False):
    def run():
        model.zero_grad(set_to_none=True)
        with tritonmm.use_tritonmm() if routed else contextlib.nullcontext():
            loss = F.cross_entropy(model(idx).float().flatten(0, 1), targets.flatten())
            loss.backward()
        return loss
    return run


for label, fn in (("aten", step(base)), ("swap_linears", step(swapped)), ("use_tritonmm", step(base, True))):
    profiled(f"TinyGPT w2048 {label}", fn)


def block(x, w1, b1, w2):
    return x + tritonmm.matmul(tritonmm.linear(x, w1, b1, "gelu_tanh"), w2.T)


compiled = torch.compile(block, fullgraph=True)
M, width = 128, 4096
x = torch.randn(M, width, device="cuda").bfloat16()
w1 = (torch.randn(4 * width, width, device="cuda") / width ** 0.5).bfloat16()
b1 = torch.randn(4 * width, device="cuda").bfloat16()
w2 = (torch.randn(width, 4 * width, device="cuda") / (4 * width) ** 0.5).bfloat16()
with torch.no_grad():
    for label, fn in (("eager", lambda: block(x, w1, b1, w2)), ("compiled", lambda: compiled(x, w1, b1, w2))):
        profiled(f"compile block M={M} {label}", fn, steps=10)
    from tritonmm import plan
    h = tritonmm.linear(x, w1, b1, "gelu_tanh")
    print("linear", plan.chosen(x, w1.T, "native", b1, "gelu_tanh"), "matmul", plan.chosen(h, w2.T, "native"))
