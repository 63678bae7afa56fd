"""Op-level benchmarks beyond the product table: tritonmm as a PyTorch user meets it.

    python -m bench.suites linear    # tritonmm.linear(bias, gelu_tanh) vs F.gelu(F.linear(...)), LLM MLP shapes
    python -m bench.suites model     # forward + backward of bench/model.py's TinyGPT: aten vs tritonmm
    python -m bench.suites compile   # a function calling tritonmm, eager vs torch.compile
    python -m bench.suites host      # eager host time per call of small products (kernel time negligible)

Each suite times the implementations it compares in interleaved rounds (every one once per
round, in turn; the median round is kept), with do_bench medians inside a round; the linear
suite's inputs rotate through enough copies to defeat the L2 where they would fit in it.
"""
import argparse
import contextlib
import itertools
import statistics
import sys

import torch
import torch.nn.functional as F
from tabulate import tabulate

import tritonmm
from tritonmm import timing


def interleaved(fns: dict, rounds: int) -> dict:
    """{name: median over rounds of do_bench's median ms}, every fn timed once per round, in turn."""
    for fn in fns.values():
        fn()  # compile, tune and warm up outside the timing
    torch.cuda.synchronize()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(timing.median_ms(fn))
    return {name: statistics.median(t) for name, t in times.items()}


def _copies(nbytes: int) -> int:
    """How many input copies to rotate through so that one pass exceeds twice the L2."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return min(8, max(1, -(-2 * l2 // max(nbytes, 1))))


def _rel(out, ref) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


def linear_suite(rounds: int):
    """The fused epilogue: one kernel against torch's two (F.linear then F.gelu), inference."""
    rows = []
    for (N, K), M in itertools.product(((14336, 4096), (4096, 14336)), (16, 128, 1024, 2048, 4096, 8192)):
        n_sets = _copies((M * K + N * K) * 2)
        sets = [(torch.randn(M, K, device="cuda").bfloat16(), (torch.randn(N, K, device="cuda") / K ** 0.5).bfloat16(),
                 torch.randn(N, device="cuda").bfloat16()) for _ in range(n_sets)]
        x, w, b = sets[0]
        ref = F.gelu(x.double() @ w.double().T + b.double(), approximate="tanh")
        err = _rel(tritonmm.linear(x, w, b, "gelu_tanh"), ref)
        torch_err = _rel(F.gelu(F.linear(x, w, b), approximate="tanh"), ref)
        del ref
        cyc_t, cyc_m = itertools.cycle(sets), itertools.cycle(sets)
        with torch.no_grad():
            ms = interleaved({"torch": lambda: F.gelu(F.linear(*next(cyc_t)), approximate="tanh"),
                              "tritonmm": lambda: tritonmm.linear(*next(cyc_m), "gelu_tanh")}, rounds)
        tf = lambda t: timing.tflops(M, N, K, t)  # noqa: E731
        rows.append([M, N, K, f"{ms['torch']:.4f}", f"{ms['tritonmm']:.4f}", f"{tf(ms['torch']):.0f}",
                     f"{tf(ms['tritonmm']):.0f}", f"{ms['torch'] / ms['tritonmm']:.2f}", f"{err:.1e}", f"{torch_err:.1e}"])
    return tabulate(rows, headers=["M", "N", "K", "torch ms", "tritonmm ms", "torch TFLOP/s", "tritonmm TFLOP/s",
                                   "speedup", "rel err", "torch rel err"], disable_numparse=True)


def model_suite(rounds: int):
    """One training step (forward, loss, backward) of TinyGPT in bf16: aten, then the same model
    with its Linear layers swapped, then under use_tritonmm() (attention's bmm too)."""
    import copy

    from bench.model import TinyGPT, make_batch
    rows = []
    for width, layers, seq, batch in ((1024, 4, 1024, 8), (2048, 2, 512, 8)):
        torch.manual_seed(0)
        base = TinyGPT(vocab=8192, width=width, heads=width // 64, layers=layers, seq=seq).cuda().bfloat16()
        swapped = copy.deepcopy(base)
        tritonmm.nn.swap_linears(swapped)
        idx, targets = make_batch(batch, seq, 8192, "cuda", torch.Generator().manual_seed(1))

        def step(model, routed=False):
            def run():
                model.zero_grad(set_to_none=True)
                with tritonmm.use_tritonmm() if routed else contextlib.nullcontext():
                    loss = F.cross_entropy(model(idx).float().flatten(0, 1), targets.flatten())
                    loss.backward()
                return loss
            return run

        losses = {name: fn().item() for name, fn in (("aten", step(base)), ("swap", step(swapped)),
                                                     ("routed", step(base, True)))}
        ms = interleaved({"aten": step(base), "swap_linears": step(swapped), "use_tritonmm": step(base, True)}, rounds)
        rows.append([f"w{width} L{layers} T{seq} B{batch}", f"{ms['aten']:.2f}", f"{ms['swap_linears']:.2f}",
                     f"{ms['aten'] / ms['swap_linears']:.2f}", f"{ms['use_tritonmm']:.2f}",
                     f"{ms['aten'] / ms['use_tritonmm']:.2f}",
                     f"{losses['aten']:.4f} / {losses['swap']:.4f} / {losses['routed']:.4f}"])
    return tabulate(rows, headers=["TinyGPT bf16", "aten ms", "swap_linears ms", "x aten", "use_tritonmm ms",
                                   "x aten", "loss aten / swap / routed"], disable_numparse=True)


def compile_suite(rounds: int):
    """An MLP block with a residual, calling tritonmm: eager against torch.compile (inductor)."""
    rows = []

    def block(x, w1, b1, w2):
        return x + tritonmm.matmul(tritonmm.linear(x, w1, b1, "gelu_tanh"), w2.T)

    compiled = torch.compile(block, fullgraph=True)
    for M, width in ((16, 4096), (128, 4096), (1024, 4096), (4096, 4096)):
        x = torch.randn(M, width, device="cuda").bfloat16()
        w1 = (torch.randn(4 * width, width, device="cuda") / width ** 0.5).bfloat16()
        b1 = torch.randn(4 * width, device="cuda").bfloat16()
        w2 = (torch.randn(width, 4 * width, device="cuda") / (4 * width) ** 0.5).bfloat16()
        with torch.no_grad():
            err = _rel(compiled(x, w1, b1, w2), block(x, w1, b1, w2).double())
            ms = interleaved({"eager": lambda: block(x, w1, b1, w2), "compiled": lambda: compiled(x, w1, b1, w2)},
                             rounds)
        rows.append([M, width, f"{ms['eager']:.4f}", f"{ms['compiled']:.4f}", f"{ms['eager'] / ms['compiled']:.2f}",
                     f"{err:.1e}"])
    return tabulate(rows, headers=["M", "width", "eager ms", "compiled ms", "compiled speedup", "rel diff"],
                    disable_numparse=True)


def host_suite(rounds: int):
    """Host time a call (wall clock over back-to-back calls; the kernels are too small to matter)."""
    rows = []
    for M, N, K in ((64, 64, 64), (16, 4096, 4096), (1, 4096, 4096)):
        a = torch.randn(M, K, device="cuda").bfloat16()
        b = torch.randn(K, N, device="cuda").bfloat16()
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        fns = {"torch.mm": lambda: torch.mm(a, b, out=out), "tritonmm.mm": lambda: tritonmm.mm(a, b, out=out),
               "tritonmm.matmul": lambda: tritonmm.matmul(a, b),
               "tritonmm.linear": lambda: tritonmm.linear(a, b.T)}
        for fn in fns.values():
            fn()
        us = {name: statistics.median(timing.host_us_per_call(fn) for _ in range(rounds)) for name, fn in fns.items()}
        rows.append([f"{M}x{N}x{K}"] + [f"{us[n]:.1f}" for n in fns] + [f"{us['tritonmm.mm'] / us['torch.mm']:.2f}"])
    from tritonmm import fast_launch
    return (f"direct relaunch (fast_launch) {'on' if fast_launch.enabled() else 'OFF'}\n" +
            tabulate(rows, headers=["bf16 shape", "torch.mm us", "tritonmm.mm us", "matmul us", "linear us",
                                    "mm x torch"], disable_numparse=True))


SUITES = {"linear": linear_suite, "model": model_suite, "compile": compile_suite, "host": host_suite}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.suites", description=__doc__.split("\n\n")[0])
    p.add_argument("suite", nargs="+", choices=sorted(SUITES))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("No CUDA GPU found: these suites time GPU kernels. Nothing timed.")
        return 0
    import triton
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
          f"medians of {args.rounds} interleaved rounds of do_bench medians")
    for name in args.suite:
        print(f"\n## {name}\n{SUITES[name](args.rounds)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
