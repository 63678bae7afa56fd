"""Op-level benchmarks beyond the product table: tritonmm as a PyTorch user meets it.

    python -m bench.suites linear    # tritonmm.linear(bias, gelu_tanh) vs F.gelu(F.linear(...)), LLM MLP shapes
    python -m bench.suites model     # forward + backward of bench/model.py's TinyGPT: aten vs tritonmm
    python -m bench.suites compile   # a block calling tritonmm, eager vs torch.compile (default, reduce-overhead)
    python -m bench.suites host      # eager host time per call of small products (kernel time negligible)
    python -m bench.suites fp8       # tritonmm.scaled_mm vs torch._scaled_mm, tensor-wise and row-wise scales

Each suite times the implementations it compares in interleaved rounds (every one once per
round, in turn; the median round is kept), with device-time medians (common.device_ms) inside a round; the linear
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

from . import fp8
from .common import copies, interleaved_times, rel_err, served


def interleaved(fns: dict, rounds: int) -> dict:
    """{name: median over rounds of do_bench's median ms}, every fn timed once per round, in turn."""
    return {name: statistics.median(t) for name, t in interleaved_times(fns, rounds).items()}


def linear_suite(rounds: int):
    """The fused epilogue: one kernel against torch's two (F.linear then F.gelu), inference."""
    rows = []
    for (N, K), M in itertools.product(((14336, 4096), (4096, 14336)), (16, 128, 1024, 2048, 4096, 8192)):
        n_sets = copies((M * K + N * K) * 2)
        sets = [(torch.randn(M, K, device="cuda").bfloat16(), (torch.randn(N, K, device="cuda") / K ** 0.5).bfloat16(),
                 torch.randn(N, device="cuda").bfloat16()) for _ in range(n_sets)]
        x, w, b = sets[0]
        ref = F.gelu(x.double() @ w.double().T + b.double(), approximate="tanh")
        err = rel_err(tritonmm.linear(x, w, b, "gelu_tanh"), ref)
        torch_err = rel_err(F.gelu(F.linear(x, w, b), approximate="tanh"), ref)
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


class MLPBlock(torch.nn.Module):
    """x + (gelu_tanh(x @ W1.T + b1) @ W2.T) through tritonmm: the compile suite's function, with
    bf16 weights of a model of ``width`` as parameters (CUDA-graph trees take those as static inputs)."""

    def __init__(self, width: int):
        super().__init__()
        weights = ((torch.randn(4 * width, width, device="cuda") / width ** 0.5).bfloat16(),
                   torch.randn(4 * width, device="cuda").bfloat16(),
                   (torch.randn(width, 4 * width, device="cuda") / (4 * width) ** 0.5).bfloat16())
        self.w1, self.b1, self.w2 = (torch.nn.Parameter(t, requires_grad=False) for t in weights)

    def forward(self, x):
        return x + tritonmm.matmul(tritonmm.linear(x, self.w1, self.b1, "gelu_tanh"), self.w2.T)


def compile_suite(rounds: int):
    """MLPBlock: eager against torch.compile (inductor), in its default mode and in
    mode="reduce-overhead" (the compiled graph replayed through CUDA-graph trees). Each M compiles
    anew (static shapes). The
    rel diff is against eager, of a default-mode call and of a replayed graph's output."""
    from torch._dynamo.utils import counters
    rows = []
    for M, width in ((16, 4096), (128, 4096), (1024, 4096), (4096, 4096)):
        x = torch.randn(M, width, device="cuda").bfloat16()
        block = MLPBlock(width)
        compiled = torch.compile(block, fullgraph=True)
        graphed = torch.compile(block, fullgraph=True, mode="reduce-overhead")
        skips = counters["inductor"]["cudagraph_skips"]
        try:
            with torch.no_grad():
                ref = block(x).double()
                ms = interleaved({"eager": lambda: block(x), "compiled": lambda: compiled(x),
                                  "graphed": lambda: graphed(x)}, rounds)
                # After the timing, graphed(x) replays the recorded graph (its first calls warm up
                # and record), whose products were planned while captured.
                err = max(rel_err(compiled(x), ref), rel_err(graphed(x).clone(), ref))
        finally:
            torch._dynamo.reset()  # each width's graphs (and their CUDA-graph memory) go before the next
        graphs = "yes" if counters["inductor"]["cudagraph_skips"] == skips else "skipped"
        rows.append([M, width, f"{ms['eager']:.4f}", f"{ms['compiled']:.4f}", f"{ms['eager'] / ms['compiled']:.2f}",
                     f"{ms['graphed']:.4f}", f"{ms['eager'] / ms['graphed']:.2f}", graphs, f"{err:.1e}"])
    return tabulate(rows, headers=["M", "width", "eager ms", "compiled ms", "compiled x eager", "reduce-overhead ms",
                                   "reduce-overhead x eager", "CUDA graphs", "rel diff"], disable_numparse=True)


def host_suite(rounds: int):
    """Host time a call: wall clock over back-to-back calls of products whose kernels take a few
    microseconds, so the host's launch path is what is timed. Rounds interleave the calls. Ask for 15: with 3, one
    version's linear / F.linear moved between 1.03 and 1.31 from process to process, where 15
    rounds in one process timed F.linear against itself within 1%."""
    from tritonmm import fast_launch, thresholds
    from tritonmm.planner import chosen
    rows = []
    # (M, N, K, path, bias): 64^3 on each kernel path (the TMA kernel forced by lowering its size bars), the linears
    # also with a bias, and decode products x @ W.T, which split-K runs as two launches.
    for M, N, K, path, with_bias in ((64, 64, 64, "pointer", False), (64, 64, 64, "tma", False),
                                     (64, 64, 64, "pointer", True), (64, 64, 64, "tma", True),
                                     (16, 4096, 4096, "pointer", False), (1, 4096, 4096, "pointer", False)):
        a = torch.randn(M, K, device="cuda").bfloat16()
        w = torch.randn(N, K, device="cuda").bfloat16()
        bias = torch.randn(N, device="cuda").bfloat16() if with_bias else None
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        fns = {"torch.mm": lambda: torch.mm(a, w.T, out=out), "tritonmm.mm": lambda: tritonmm.mm(a, w.T, out=out),
               "tritonmm.matmul": lambda: tritonmm.matmul(a, w.T),
               "F.linear": lambda: torch.nn.functional.linear(a, w, bias),
               "tritonmm.linear": lambda: tritonmm.linear(a, w, bias)}
        forced = thresholds.override(tma_min_macs=0, few_tiles_per_sm=0) if path == "tma" else contextlib.nullcontext()
        with forced:
            for fn in fns.values():
                fn()
            cfg, taken = chosen(a, w.T, "native", served=served(a, False))
            us = {name: [] for name in fns}
            for _ in range(rounds):
                for name, fn in fns.items():
                    us[name].append(timing.host_us_per_call(fn))
        us = {name: statistics.median(t) for name, t in us.items()}
        rows.append([f"{M}x{N}x{K}" + (" +bias" if with_bias else ""),
                     f"{taken} split {cfg.kwargs.get('SPLIT_K', 1)}",
                     *(f"{us[n]:.1f}" for n in fns), f"{us['tritonmm.mm'] / us['torch.mm']:.2f}",
                     f"{us['tritonmm.matmul'] / us['torch.mm']:.2f}", f"{us['tritonmm.linear'] / us['F.linear']:.2f}"])
    return (f"direct relaunch (fast_launch) {'on' if fast_launch.enabled() else 'OFF'}; x @ W.T, bf16, us per call; "
            f"+bias: the linears' (N,) bias\n" +
            tabulate(rows, headers=["shape", "path", "torch.mm", "tritonmm.mm", "tritonmm.matmul", "F.linear",
                                    "tritonmm.linear", "mm/torch", "matmul/torch", "linear/F"], disable_numparse=True))


FP8_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), *[(m, n, k) for n, k in ((14336, 4096), (4096, 14336))
                                                          for m in (16, 1024, 8192)]]


def fp8_suite(rounds: int):
    """FP8 products with scales against torch._scaled_mm, on the layout it requires (b
    column-major), bf16 out; squares and an LLM's projections (bench/fp8.py measures). Errors
    against a float64 product of the dequantized operands (skipped above common.REF_MAX_MACS multiply-adds)."""
    return fp8_table([fp8.measure_shape(M, N, K, kind, rounds)
                      for (M, N, K), kind in itertools.product(FP8_SHAPES, fp8.SCALES)])


def fp8_table(rows: list) -> str:
    """bench/fp8.py's measure_shape rows side by side: times, TFLOP/s, speedup (torch._scaled_mm
    time / tritonmm time), both errors and tritonmm's config; '-' where there is no number."""
    def num(v, spec):
        return "-" if v is None or v != v else format(v, spec)

    out = []
    for r in rows:
        ms_t, ms_m = r["ms"].get(fp8.TORCH), r["ms"].get(fp8.TRITONMM)
        out.append([r["shape"], r["scales"], num(ms_t, ".4f"), num(ms_m, ".4f"), num(fp8.tflops(r, fp8.TORCH), ".0f"),
                    num(fp8.tflops(r, fp8.TRITONMM), ".0f"), num(ms_t and ms_m and ms_t / ms_m, ".2f"),
                    num(r["rel_err"].get(fp8.TRITONMM), ".1e"), num(r["rel_err"].get(fp8.TORCH), ".1e"),
                    r["config"] or "-"])
    return tabulate(out, headers=["shape", "scales", "_scaled_mm ms", "tritonmm ms", "_scaled_mm TFLOP/s",
                                  "tritonmm TFLOP/s", "speedup", "rel err", "_scaled_mm rel err", "tritonmm config"],
                    disable_numparse=True)


SUITES = {"fp8": fp8_suite, "linear": linear_suite, "model": model_suite, "compile": compile_suite, "host": host_suite}


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
          f"medians of {args.rounds} interleaved rounds of device-time medians (common.device_ms)")
    for name in args.suite:
        print(f"\n## {name}\n{SUITES[name](args.rounds)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
