"""The sweep: tritonmm against torch.mm over the shapes the planner is tuned on, in fp16 and
bf16; in fp8, tritonmm.scaled_mm against torch._scaled_mm (bench/fp8.py's operands).

    python -m bench --preset sweep --rounds 3 --out results/sweep/
    python -m bench --preset sweep --dtype fp8 --rounds 3 --out results/sweep_fp8/

Two times per implementation and shape. "graph": the calls captured in a CUDA graph, so the
host's launch path is gone and only the kernels remain; small products would otherwise be
timed as host time. "eager": back-to-back plain calls, host time included, as an eager user
meets them. Both rotate through operand copies, enough (up to 8) that one pass over them
exceeds twice the L2, as a model's layers each bring their own weights.

fp8: e4m3 operands from quantize_fp8 with row-wise scales (a per row of a, one per column of
b: per-token activations times per-channel weights), bf16 out, and b column-major, the only
layout torch._scaled_mm takes, so every shape runs as x @ W.T ("NT"). Where torch._scaled_mm
refuses a shape (K or N not a multiple of 16) tritonmm is timed alone: the torch columns are
empty and the summary names those shapes.
"""
import itertools
import math
import random
import statistics
from collections import defaultdict

import torch

import tritonmm
from tritonmm import timing

from . import fp8
from .common import REF_MAX_MACS, copies, device_ms, rel_err, tritonmm_config

# (M, N, K, layout): "NN" multiplies (M, K) @ (K, N); "NT" multiplies (M, K) @ W.T for a
# contiguous (N, K) weight W, as F.linear does.
SHAPES = [
    # Squares, including sizes that are not powers of two: tile quantization and wave
    # quantization differ at each.
    *[(s, s, s, "NN") for s in (256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)],
    # An LLM's projections, x @ W.T: M is tokens in flight, from one (decode, bound by reading
    # the weight) to 8192 (prefill, bound by the tensor cores); (N, K) are a 4096-wide model's
    # attention projection, MLP up and MLP down.
    *[(m, n, k, "NT") for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))
      for m in (1, 16, 64, 128, 512, 1024, 4096, 8192)],
    # Thin and wide: N or M of 64 leaves few output tiles to spread over the SMs; K of 64 or
    # 256 gives each tile a short K loop, so writing the output weighs as much as the math.
    (8192, 64, 8192, "NN"), (64, 8192, 8192, "NN"), (8192, 8192, 64, "NN"), (16384, 1024, 256, "NN"),
    # Unaligned sizes: rows that are not 16-byte aligned rule out TMA and vector loads, and
    # every dimension has a ragged edge tile.
    (3000, 3001, 2999, "NN"), (1023, 1025, 1027, "NN"), (4095, 4097, 1531, "NN"), (77, 4099, 2049, "NT"),
    (2047, 2049, 2051, "NN"),
    # K not a multiple of 64: aligned rows, but the last K step is partial at BLOCK_K = 64.
    (4096, 4096, 4000, "NN"), (2048, 2048, 1000, "NN"), (3000, 3008, 3000, "NN"),
]

# Model widths (N, K) of x @ W.T that draw() picks from: attention and MLP projections of 2048- to
# 8192-wide models (two of them, 3072 and 8192 square, are among SHAPES' (N, K); M makes the shape new).
DRAW_WIDTHS = [(3072, 3072), (8192, 3072), (3072, 8192), (5120, 5120), (13824, 5120), (5120, 13824),
               (8192, 8192), (28672, 8192), (8192, 28672), (6144, 2048), (2048, 6144)]
DRAW_KINDS = ("aligned", "unaligned", "square", "llm", "decode")
DRAW_MAX_MACS = 2**37  # a draw above this is drawn again: each shape stays under ~0.3 s of timing
DRAW_MAX = 200  # shapes one draw can hold: each kind has room for far more distinct shapes than a fifth of it


def draw(n: int, seed: int) -> list:
    """n shapes drawn at random, the kinds of SHAPES in turn, none of them its shapes: the same
    rules, checked where they were not tuned. Sizes log-uniform; seed makes a draw repeatable.
    aligned: M, N, K multiples of 16 in 256-8192, NN or NT. unaligned: each size in 64-6144 and
    none a multiple of 8 (no row is 16-byte aligned). square: a multiple of 64 in 512-6144.
    llm: x @ W.T over DRAW_WIDTHS, M in 128-8192 tokens. decode: M in 1-64 over DRAW_WIDTHS."""
    if not 1 <= n <= DRAW_MAX:
        raise ValueError(f"draw: n must be 1-{DRAW_MAX} (squares run out of distinct sizes past a few hundred), not {n}")
    rng = random.Random(seed)

    def size(lo, hi, multiple=1):
        return max(multiple, round(math.exp(rng.uniform(math.log(lo), math.log(hi))) / multiple) * multiple)

    def unaligned(lo, hi):
        s = size(lo, hi)
        return s if s % 8 else s + rng.randint(1, 7)

    def one(kind):
        if kind == "aligned":
            return (size(256, 8192, 16), size(256, 8192, 16), size(256, 8192, 16), rng.choice(("NN", "NT")))
        if kind == "unaligned":
            return (unaligned(64, 6144), unaligned(64, 6144), unaligned(64, 6144), rng.choice(("NN", "NT")))
        if kind == "square":
            s = size(512, 6144, 64)
            return (s, s, s, "NN")
        n, k = rng.choice(DRAW_WIDTHS)
        return (size(128, 8192) if kind == "llm" else rng.randint(1, 64), n, k, "NT")

    known = {(m, n, k) for m, n, k, _ in SHAPES}
    shapes = []
    while len(shapes) < n:
        shape = one(DRAW_KINDS[len(shapes) % len(DRAW_KINDS)])
        if shape[0] * shape[1] * shape[2] <= DRAW_MAX_MACS and shape[:3] not in known and shape not in shapes:
            shapes.append(shape)
    return shapes


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}
FP8_SCALES = "row"  # the scale kind of the sweep's fp8 products (bench/fp8.py's SCALES)
BASELINES = {"fp8": fp8.TORCH}  # what tritonmm is timed against, per dtype; torch.mm otherwise
FP8_NOTE = ("tritonmm.scaled_mm against torch._scaled_mm (x = its time / tritonmm's), e4m3 from quantize_fp8 with "
            "row-wise scales, bf16 out, b column-major (every shape x @ W.T); where torch._scaled_mm refuses a "
            "shape (K or N not a multiple of 16) tritonmm is timed alone, torch columns '-'")


def shapes_for(dtype: str, shapes=None) -> list:
    """The sweep's shapes for dtype: SHAPES, or for fp8 each as x @ W.T (b column-major, as
    torch._scaled_mm requires), a shape listed in both layouts once."""
    shapes = SHAPES if shapes is None else shapes
    if dtype != "fp8":
        return list(shapes)
    return list(dict.fromkeys((m, n, k, "NT") for m, n, k, _ in shapes))


def _operands(M, N, K, layout, dtype):
    a = torch.randn(M, K, device="cuda").to(dtype)
    if layout == "NT":
        return a, torch.randn(N, K, device="cuda").to(dtype).T
    return a, torch.randn(K, N, device="cuda").to(dtype)


def _products(dtype: str, M, N, K, layout):
    """(operand sets, {"torch": call, "tritonmm": call}, reference, note) for one shape; call(*operands)
    returns the product and reference(*operands) its float64 value. fp8: bench/fp8.py's operands
    and calls, without "torch" where torch._scaled_mm refuses the shape (note says why)."""
    if dtype == "fp8":
        sets = fp8.operand_sets(M, N, K, FP8_SCALES)
        fns, raised = fp8.checked(fp8.calls(M, N, K), sets[0])
        names = {fp8.TORCH: "torch", fp8.TRITONMM: "tritonmm"}
        return sets, {names[n]: f for n, f in fns.items()}, fp8.reference, fp8.torch_refuses(M, N, K) or raised
    dt = DTYPES[dtype]
    sets = [_operands(M, N, K, layout, dt) for _ in range(copies((M * K + K * N) * dt.itemsize))]
    outs = {name: torch.empty(M, N, dtype=dt, device="cuda") for name in ("torch", "tritonmm")}
    calls = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]),
             "tritonmm": lambda a, b: tritonmm.matmul(a, b, out=outs["tritonmm"])}
    return sets, calls, lambda a, b: a.double() @ b.double(), None


def _graph(call, sets):
    """A CUDA graph that runs call once per operand copy. The calls run once on a side stream
    first, as torch's documentation asks: lazy set-up (cuBLAS's handle and workspace for a new
    stream) must not happen inside capture."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for ops in sets:
            call(*ops)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for ops in sets:
            call(*ops)
    return graph


def _eager_calls(graph_ms: float) -> int:
    """Enough back-to-back calls for about 50 ms of eager timing, within host_us_per_call's
    usual 3000 calls: 8192-sized products would otherwise take seconds per measurement."""
    return max(20, min(3000, int(50 / graph_ms)))


def _shape_row(dtype: str, M, N, K, layout, rounds):
    sets, calls, reference, note = _products(dtype, M, N, K, layout)
    # tritonmm tunes at its first eager call of a shape; inside capture it could only take the
    # heuristic, so every call runs eagerly before any graph is captured.
    outs = {name: call(*sets[0]) for name, call in calls.items()}
    # The configs the warm-up tuned, now cached: looked up with the call's scales and out dtype. The graph
    # column runs the captured plan's config (another plan's where a graph stages operands or takes the TMA
    # kernel and an eager call does not), the eager column the eager call's.
    graph_config, eager_config = (tritonmm_config(*sets[0], out_dtype=fp8.OUT_DTYPE if dtype == "fp8" else None,
                                                  captured=captured)[0] for captured in (True, False))
    config = graph_config if graph_config == eager_config else f"{graph_config} (eager: {eager_config})"
    err = None
    if M * N * K <= REF_MAX_MACS:
        ref = reference(*sets[0])
        err = rel_err(outs["tritonmm"], ref)
        del ref  # over 100 MB of doubles at the largest shapes checked: not held through the timing
    del outs
    graphs = {name: _graph(call, sets) for name, call in calls.items()}

    def eager(call):
        cycle = itertools.cycle(sets)
        return lambda: call(*next(cycle))

    graph_ms = {name: [] for name in calls}
    eager_us = {name: [] for name in calls}
    # Eager time is wall time over back-to-back calls. Not do_bench: it clears the L2 with a
    # 256 MB memset before every call, and that memset gives the host a head start (about
    # 0.1 ms on an H100) which hides the very host time this column is for.
    for _ in range(rounds):  # interleaved: the clock's drift hits both implementations alike
        for name, call in calls.items():
            graph_ms[name].append(device_ms(graphs[name].replay) / len(sets))
            eager_us[name].append(timing.host_us_per_call(eager(call), calls=_eager_calls(graph_ms[name][0])))
    g = {name: statistics.median(t) * 1e3 for name, t in graph_ms.items()}
    e = {name: statistics.median(t) for name, t in eager_us.items()}
    return _row(M, N, K, layout, len(sets), g, e, config, err, note)


def _row(M, N, K, layout, copies, graph_us: dict, eager_us: dict, config, rel_err, note=None) -> dict:
    """A sweep row from per-implementation times in microseconds; without a "torch" time (fp8 shapes
    torch._scaled_mm refuses, note says why) its columns and the ratios are None."""
    def ratio(times):
        return times["torch"] / times["tritonmm"] if "torch" in times else None
    return dict(shape=f"{M}x{N}x{K}", M=M, N=N, K=K, layout=layout, copies=copies,
                torch_graph_us=graph_us.get("torch"), tritonmm_graph_us=graph_us["tritonmm"],
                ratio_graph=ratio(graph_us), torch_eager_us=eager_us.get("torch"),
                tritonmm_eager_us=eager_us["tritonmm"], ratio_eager=ratio(eager_us), config=config, rel_err=rel_err,
                note=note)


def measure(dtype: str, shapes, rounds: int = 1, progress=None) -> list:
    """One row per shape for dtype ('fp16', 'bf16' or 'fp8': pass shapes_for(dtype)); times are
    medians over interleaved rounds, in microseconds per product. progress, if given, is updated
    once per shape."""
    rows = []
    for M, N, K, layout in shapes:
        rows.append(dict(dtype=dtype, **_shape_row(dtype, M, N, K, layout, rounds)))
        if progress is not None:
            progress.update(1)
    return rows


def summarize(rows: list) -> list:
    """One line per dtype: geomean and minimum of the torch/tritonmm time ratio (above 1:
    tritonmm is faster), graph and eager, with the shape of each minimum; over the shapes with
    a torch time, the others (fp8 shapes torch._scaled_mm refuses) named."""
    by_dtype = defaultdict(list)
    for r in rows:
        by_dtype[r["dtype"]].append(r)
    lines = []
    for dtype, every in by_dtype.items():
        sub = [r for r in every if r["ratio_graph"] is not None]
        alone = [f"{r['shape']} {r['layout']}" for r in every if r["ratio_graph"] is None]
        base = BASELINES.get(dtype, "torch.mm")
        if not sub:
            lines.append(f"{dtype}: no shape with a {base} time ({len(alone)} shapes, tritonmm timed alone)")
            continue
        parts = []
        for kind in ("graph", "eager"):
            ratios = [r[f"ratio_{kind}"] for r in sub]
            worst = min(sub, key=lambda r: r[f"ratio_{kind}"])
            geomean = math.exp(statistics.fmean(math.log(x) for x in ratios))
            parts.append(f"{kind} geomean {geomean:.2f}, min {worst[f'ratio_{kind}']:.2f} "
                         f"at {worst['shape']} {worst['layout']}")
        refused = (f" ({len(alone)} more that {base} refuses, tritonmm timed alone: {', '.join(alone)})"
                   if alone else "")
        lines.append(f"{dtype} over {len(sub)} shapes{refused}, {base} time / tritonmm time: " + "; ".join(parts))
    return lines
