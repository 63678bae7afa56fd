"""Experiment (session 8): host time of tritonmm's operator paths, per call, no profiler.

Run 1 (model_profile.py) found the compiled MLP block at M = 128 host-bound (0.44 ms a call against
0.15 eager, the same kernels on the GPU) with tritonmm::eager_product at 177 us of self CPU a call
under the profiler, and the w2048 swapped step's custom-op calls at ~200 us each. Here: host us a
call (timing.host_us_per_call) of a product eagerly, through each operator, under autograd by the
operator and by the autograd.Function (session 8's eager path), and the compiled block; how many
calls re-plan (Product built) in the compiled block; and cProfile of the compiled block.

    PYTHONPATH=. python3 notes/experiments/op_host.py
"""
import cProfile
import pstats

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing

M, width = 128, 4096
x = torch.randn(M, width, device="cuda").bfloat16()
w1 = (torch.randn(4 * width, width, device="cuda") / width ** 0.5).bfloat16()
b1 = torch.randn(4 * width, device="cuda").bfloat16()
w2 = (torch.randn(width, 4 * width, device="cuda") / (4 * width) ** 0.5).bfloat16()
s = torch.randn(64, 64, device="cuda").bfloat16()


def block(x, w1, b1, w2):
    return x + tritonmm.matmul(tritonmm.linear(x, w1, b1, "gelu_tanh"), w2.T)


compiled = torch.compile(block, fullgraph=True)
sg = s.clone().requires_grad_()


def fwd_bwd(fn):
    def run():
        fn().backward(gradient=g)
    return run


g = torch.randn(64, 64, device="cuda").bfloat16()
calls = {
    "mm 64^3 eager": lambda: tritonmm.mm(s, s),
    "mm 64^3 torch.ops.tritonmm.mm": lambda: torch.ops.tritonmm.mm(s, s, "native"),
    "mm 64^3 eager_product op": lambda: torch.ops.tritonmm.eager_product(s, s, None, "none", "native"),
    "mm 64^3 plan.product": lambda: plan.product(s, s, precision="native"),
    "torch.mm 64^3": lambda: torch.mm(s, s),
    "mm 64^3 fwd+bwd, Function": fwd_bwd(lambda: tritonmm.mm(sg, s)),
    "mm 64^3 fwd+bwd, operator": fwd_bwd(lambda: torch.ops.tritonmm.mm(sg, s, "native")),
    "mm 64^3 fwd+bwd, torch": fwd_bwd(lambda: torch.mm(sg, s)),
}
with torch.no_grad():
    for n in range(3):
        compiled(x, w1, b1, w2)
    calls["block M=128 eager"] = lambda: block(x, w1, b1, w2)
    calls["block M=128 compiled"] = lambda: compiled(x, w1, b1, w2)
    rows = []
    for name, fn in calls.items():
        with torch.set_grad_enabled("fwd+bwd" in name):
            fn()
            rows.append([name, f"{timing.host_us_per_call(fn, 1000):.1f}"])
        print(*rows[-1], flush=True)
    built = [0]
    init = plan.Product.__init__

    def counting(self, *a, **k):
        built[0] += 1
        init(self, *a, **k)
    plan.Product.__init__ = counting
    for _ in range(50):
        compiled(x, w1, b1, w2)
    plan.Product.__init__ = init
    print(f"compiled block: {built[0]} Products built in 50 calls; launch cache {len(plan._compiled)} entries")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        compiled(x, w1, b1, w2)
    torch.cuda.synchronize()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)
# The eager autograd path at 64^3: what a forward + backward spends its host time on.
step = calls["mm 64^3 fwd+bwd, Function"]
built[0] = 0
plan.Product.__init__ = counting
for _ in range(50):
    step()
plan.Product.__init__ = init
print(f"fwd+bwd: {built[0]} Products built in 50 calls")
# The backward of CUDA tensors runs on autograd's device thread, which cProfile does not see: here
# it runs on this one.
with torch.autograd.set_multithreading_enabled(False):
    rows.append(["mm 64^3 fwd+bwd, Function, backward on the caller's thread",
                 f"{timing.host_us_per_call(step, 1000):.1f}"])
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        step()
    torch.cuda.synchronize()
    prof.disable()
pstats.Stats(prof).sort_stats("tottime").print_stats(30)
print(tabulate(rows, headers=["call", "host us a call"]))
