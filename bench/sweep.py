"""The sweep: tritonmm against torch.mm (torch.bmm for batched products) over the shapes the planner
is tuned on, or over shapes drawn at random, in fp16 and bf16; in fp8, tritonmm.scaled_mm against
torch._scaled_mm (bench/fp8.py's operands).

    python -m bench --preset sweep --rounds 3 --out results/sweep/
    python -m bench --preset sweep --dtype fp8 --rounds 3 --out results/sweep_fp8/
    python -m bench --preset sweep --draw 40 --seed 12 --rounds 3 --dtype bf16   # drawn shapes (draw)

Two times per implementation and shape. "graph": the calls captured in a CUDA graph, so the
host's launch path is gone and only the kernels remain; small products would otherwise be
timed as host time. "eager": back-to-back plain calls, host time included, as an eager user
meets them. Both rotate through operand copies, enough (up to 8) that one pass over them
exceeds twice the L2, as a model's layers each bring their own weights.

Every row records its kind (what it stands for: a square, a model's forward or backward product,
a batched one...) and its class: the largest power of two dividing a size, capped at 128 ("odd"
for 1), taken as the smallest over M, N and K (the per-dimension classes beside it). A class says
how aligned rows are and how the sizes meet the tiles; the summary gives the ratios per class, per
kind, and over the products whose plans stage no operand copies as well as over all.

fp8: e4m3 operands from quantize_fp8 with row-wise scales (a per row of a, one per column of
b: per-token activations times per-channel weights), bf16 out, and b column-major, the only
layout torch._scaled_mm takes, so every 2-D shape runs as x @ W.T ("NT"), and batched ones are
left out. Where torch._scaled_mm refuses a shape (K or N not a multiple of 16) tritonmm is timed
alone: the torch columns are empty and the summary names those shapes.
"""
import itertools
import math
import random
import statistics
from collections import defaultdict
from typing import NamedTuple

import torch

import tritonmm
from tritonmm import timing

from . import fp8
from .common import REF_MAX_MACS, copies, device_ms, rel_err, round_order, tritonmm_config


class Shape(NamedTuple):
    """One product of the sweep: (Z of) (M, K) @ (K, N). layout names a's and b's storage: "N" row-major,
    "T" a transposed view of a row-major tensor ("NT" is x @ W.T for a contiguous (N, K) weight W, as
    F.linear computes; "TN" is a weight gradient dY.T @ X). Z > 1 is a batched (3-D) product."""
    M: int
    N: int
    K: int
    layout: str = "NN"
    Z: int = 1
    kind: str = "listed"

    @property
    def text(self) -> str:
        dims = f"{self.M}x{self.N}x{self.K}"
        return f"{self.Z}x({dims})" if self.Z > 1 else dims

    @property
    def macs(self) -> int:
        return self.Z * self.M * self.N * self.K


CLASSES = (1, 2, 4, 8, 16, 32, 64, 128)


def size_class(n: int) -> int:
    """The largest power of two dividing n, capped at 128: 1 (odd) to 128."""
    return min(CLASSES[-1], n & -n)


def class_name(c: int) -> str:
    return "odd" if c == 1 else str(c)


def shape_class(shape: Shape) -> int:
    """A shape's class: the smallest of its sizes' classes (M, N and K)."""
    return min(size_class(d) for d in (shape.M, shape.N, shape.K))


def _listed(kind: str, shapes) -> list:
    return [Shape(m, n, k, layout, kind=kind) for m, n, k, layout in shapes]


SHAPES = [
    # Squares, including sizes that are not powers of two: tile quantization and wave
    # quantization differ at each.
    *_listed("square", [(s, s, s, "NN") for s in (256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)]),
    # An LLM's projections, x @ W.T: M is tokens in flight, from one (decode, bound by reading
    # the weight) to 8192 (prefill, bound by the tensor cores); (N, K) are a 4096-wide model's
    # attention projection, MLP up and MLP down.
    *_listed("forward", [(m, n, k, "NT") for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))
                         for m in (1, 16, 64, 128, 512, 1024, 4096, 8192)]),
    # Thin and wide: N or M of 64 leaves few output tiles to spread over the SMs; K of 64 or
    # 256 gives each tile a short K loop, so writing the output weighs as much as the math.
    *_listed("thin", [(8192, 64, 8192, "NN"), (64, 8192, 8192, "NN"), (8192, 8192, 64, "NN"),
                      (16384, 1024, 256, "NN")]),
    # Unaligned sizes: rows that are not 16-byte aligned rule out TMA and vector loads, and
    # every dimension has a ragged edge tile.
    *_listed("unaligned", [(3000, 3001, 2999, "NN"), (1023, 1025, 1027, "NN"), (4095, 4097, 1531, "NN"),
                           (77, 4099, 2049, "NT"), (2047, 2049, 2051, "NN")]),
    # K not a multiple of 64: aligned rows, but the last K step is partial at BLOCK_K = 64.
    *_listed("ragged-k", [(4096, 4096, 4000, "NN"), (2048, 2048, 1000, "NN"), (3000, 3008, 3000, "NN")]),
]

# Weights (N, K) of x @ W.T in real models, for draw(): (out_features, in_features).
MODEL_WEIGHTS = [
    (4096, 4096), (1024, 4096), (14336, 4096), (4096, 14336), (128256, 4096),  # Llama-3-8B: q/o, k/v, MLP, head
    (32000, 4096),  # the 32000-token head of Llama-2 and Mistral-7B
    (5120, 5120), (13824, 5120), (5120, 13824),  # 5120-wide models (Llama-2-13B, Qwen-14B): attention, MLP
    (3584, 3584), (512, 3584), (18944, 3584), (3584, 18944),  # Qwen2-7B: q/o, grouped k/v, MLP
    (768, 768), (2304, 768), (3072, 768), (768, 3072),  # GPT-2: attention out, fused qkv, MLP
]
# The MLP matrices among them: the experts' weights of draw()'s batched mixture-of-experts products.
MLP_WEIGHTS = [(14336, 4096), (4096, 14336), (13824, 5120), (5120, 13824), (18944, 3584), (3584, 18944),
               (3072, 768), (768, 3072)]
HEAD_DIMS = (64, 80, 96, 128)  # attention head sizes (80 and 96: Phi and some Qwen models)
DRAW_KINDS = ("square", "random", "forward", "backward", "batched")
DRAW_MAX_MACS = 2**40  # about 3 ms a bf16 product on an H100; a draw above it is drawn again
DRAW_MAX = 200  # shapes one draw can hold: each kind has room for far more distinct shapes than its share
_DRAW_TRIES = 1000  # a kind and class are drawn again at most this often (a shape too large or already drawn)


def _snap(x: float, cls: int) -> int:
    """The size of class cls nearest x: an odd multiple of cls, or any multiple of 128 for 128."""
    if cls == CLASSES[-1]:
        return max(1, round(x / cls)) * cls
    return (2 * max(0, round((x / cls - 1) / 2)) + 1) * cls


def draw_one(rng: random.Random, kind: str, cls: int) -> Shape:
    """One shape of kind whose class (shape_class) is cls; its sizes come uniformly or log-uniformly (a coin
    per shape) from the kind's range and are then moved to the nearest size of the class wanted."""
    uniform = rng.random() < 0.5

    def size(lo, hi, c=cls):
        x = rng.uniform(lo, hi) if uniform else math.exp(rng.uniform(math.log(lo), math.log(hi)))
        return _snap(x, c)

    if kind == "square":
        s = size(256, 8192)
        return Shape(s, s, s, "NN", kind=kind)
    if kind == "random":  # one size of the class, the others of it or above
        exact = rng.randrange(3)
        m, n, k = (size(64, 8192, cls if d == exact else rng.choice([c for c in CLASSES if c >= cls]))
                   for d in range(3))
        return Shape(m, n, k, rng.choice(("NN", "NT", "TN")), kind=kind)
    if kind == "forward":  # x @ W.T, M tokens from decode's one to a long prefill's 16384
        n, k = rng.choice(MODEL_WEIGHTS)
        return Shape(size(1, 16384), n, k, "NT", kind=kind)
    if kind == "backward":  # a training step's gradients of x @ W.T: dX = dY @ W and dW = dY.T @ X
        n, k = rng.choice(MODEL_WEIGHTS)
        tokens = size(128, 16384)
        return Shape(tokens, k, n, "NN", kind=kind) if rng.random() < 0.5 else Shape(n, k, tokens, "TN", kind=kind)
    if rng.random() < 0.5:  # attention's batched products over (batch x heads): q @ k.T, then p @ v
        z, t = rng.choice((8, 16, 32, 64, 128)), size(128, 4096)
        d = rng.choice([d for d in HEAD_DIMS if size_class(d) >= cls])
        return Shape(t, t, d, "NT", z, kind) if rng.random() < 0.5 else Shape(t, d, t, "NN", z, kind)
    n, k = rng.choice(MLP_WEIGHTS)  # a mixture of experts' MLP: each expert's tokens times its weight
    return Shape(size(1, 2048), n, k, "NT", rng.choice((4, 8, 16)), kind)


def _sizes(shape: Shape) -> tuple:
    """What makes a drawn shape new: its sizes, whatever its layout."""
    return shape.Z, shape.M, shape.N, shape.K


def draw(n: int, seed: int) -> list:
    """n shapes drawn at random, none of them SHAPES': the planner's rules checked where they were not tuned.
    Shapes take DRAW_KINDS in turn: squares (256-8192), random products (each size 64-8192, NN, NT or TN),
    a model's forward products x @ W.T over MODEL_WEIGHTS with M from 1 to 16384 tokens, its backward
    products (dY @ W, NN, and dY.T @ X, TN; 128-16384 tokens), and batched ones (attention's q @ k.T and
    p @ v over 8-128 heads, or 4-16 experts' MLP products). Classes come in shuffled rounds of all eight, so
    any 8 consecutive shapes hold every class, and over a few rounds each kind meets every class. Sizes are
    drawn uniformly for half the shapes and log-uniformly for the others. Shapes above DRAW_MAX_MACS are
    drawn again (the largest weights thus meet fewer tokens). seed makes a draw repeatable."""
    if not 1 <= n <= DRAW_MAX:
        raise ValueError(f"draw: n must be 1-{DRAW_MAX} (squares run out of distinct sizes past a few hundred), not {n}")
    rng = random.Random(seed)
    taken = {_sizes(s) for s in SHAPES}
    shapes, classes = [], []
    for i in range(n):
        if i % len(CLASSES) == 0:
            classes = rng.sample(CLASSES, len(CLASSES))
        kind, cls = DRAW_KINDS[i % len(DRAW_KINDS)], classes[i % len(CLASSES)]
        for _ in range(_DRAW_TRIES):
            shape = draw_one(rng, kind, cls)
            if shape.macs <= DRAW_MAX_MACS and _sizes(shape) not in taken:
                break
        else:
            raise RuntimeError(f"draw: no new {kind} shape of class {class_name(cls)} in {_DRAW_TRIES} tries")
        taken.add(_sizes(shape))
        shapes.append(shape)
    return shapes


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}
FP8_SCALES = "row"  # the scale kind of the sweep's fp8 products (bench/fp8.py's SCALES)
BASELINES = {"fp8": fp8.TORCH}  # what tritonmm is timed against, per dtype; torch.mm (torch.bmm) otherwise
FP8_NOTE = ("tritonmm.scaled_mm against torch._scaled_mm (x = its time / tritonmm's), e4m3 from quantize_fp8 with "
            "row-wise scales, bf16 out, b column-major (every shape x @ W.T, batched ones left out); where "
            "torch._scaled_mm refuses a shape (K or N not a multiple of 16) tritonmm is timed alone, torch columns '-'")


def shapes_for(dtype: str, shapes=None) -> list:
    """The sweep's shapes for dtype: SHAPES (or the given ones), or for fp8 each 2-D one as x @ W.T (b
    column-major, as torch._scaled_mm requires), a shape listed in several layouts once."""
    shapes = [Shape(*s) for s in (SHAPES if shapes is None else shapes)]
    if dtype != "fp8":
        return shapes
    first = {}
    for s in shapes:
        if s.Z == 1:
            first.setdefault(s[:3], s._replace(layout="NT"))
    return list(first.values())


def operands(shape: Shape, dtype) -> tuple:
    """(a, b) of one shape, random normal: a "T" operand is a transposed view of a row-major tensor."""
    batch = (shape.Z,) if shape.Z > 1 else ()

    def operand(rows, cols, transposed):
        if transposed:
            return torch.randn(*batch, cols, rows, device="cuda").to(dtype).transpose(-1, -2)
        return torch.randn(*batch, rows, cols, device="cuda").to(dtype)
    return operand(shape.M, shape.K, shape.layout[0] == "T"), operand(shape.K, shape.N, shape.layout[1] == "T")


def _products(dtype: str, shape: Shape):
    """(operand sets, {"torch": call, "tritonmm": call}, reference, note) for one shape; call(*operands)
    returns the product and reference(*operands) its float64 value. 2-D products write into an output
    allocated once, as torch.mm(out=) does; batched ones return a new one from either side. fp8: bench/fp8.py's
    operands and calls, without "torch" where torch._scaled_mm refuses the shape (note says why)."""
    M, N, K = shape.M, shape.N, shape.K
    if dtype == "fp8":
        sets = fp8.operand_sets(M, N, K, FP8_SCALES)
        fns, raised = fp8.checked(fp8.calls(M, N, K), sets[0])
        names = {fp8.TORCH: "torch", fp8.TRITONMM: "tritonmm"}
        return sets, {names[n]: f for n, f in fns.items()}, fp8.reference, fp8.torch_refuses(M, N, K) or raised
    dt = DTYPES[dtype]
    sets = [operands(shape, dt) for _ in range(copies(shape.Z * (M * K + K * N) * dt.itemsize))]
    if shape.Z > 1:
        calls = {"torch": torch.bmm, "tritonmm": tritonmm.matmul}
    else:
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


def cycling(call, sets):
    """A function of no arguments that calls call on the next operand set each time (eager timing, rotated past
    the L2 as the graphs are)."""
    cycle = itertools.cycle(sets)
    return lambda: call(*next(cycle))


# Eager rounds: at least EAGER_ROUNDS of about EAGER_BUDGET_MS each, interleaved. The host's speed drifts within one
# process (design.md: decode-rounds), and a host-bound product's eager time moved by up to 1.68x between two identical
# runs of 3 rounds of 50 ms (design.md: eager-rounds); more, shorter rounds spread a slow stretch over both columns.
EAGER_ROUNDS, EAGER_BUDGET_MS, EAGER_WARMUP = 15, 10.0, 5


def _eager_calls(graph_ms: float) -> int:
    """Back-to-back calls for about EAGER_BUDGET_MS of one eager round: 5 to 600 (8192-sized products take
    over a millisecond a call; a host-bound one 10-25 us)."""
    return max(5, min(600, int(EAGER_BUDGET_MS / max(graph_ms, 1e-6))))


def _shape_row(dtype: str, shape: Shape, rounds):
    sets, calls, reference, note = _products(dtype, shape)
    # tritonmm tunes at its first eager call of a shape; inside capture it could only take the
    # heuristic, so every call runs eagerly before any graph is captured.
    outs = {name: call(*sets[0]) for name, call in calls.items()}
    # The configs the warm-up tuned, now cached: looked up with the call's scales and out dtype. The graph
    # column runs the captured plan's config (another plan's where a graph stages operands or takes the TMA
    # kernel and an eager call does not), the eager column the eager call's.
    configs = tuple(tritonmm_config(*sets[0], out_dtype=fp8.OUT_DTYPE if dtype == "fp8" else None,
                                    captured=captured)[0] for captured in (True, False))
    err = None
    if shape.macs <= REF_MAX_MACS:
        ref = reference(*sets[0])
        err = rel_err(outs["tritonmm"], ref)
        # The second call repeats the first's launches (the launch cache, or native.cpp), as every timed eager call
        # does: its result is checked too, into a NaN-filled out where the call writes one (2-D: the first's out).
        outs["tritonmm"].fill_(float("nan"))
        err = max(err, rel_err(calls["tritonmm"](*sets[0]), ref))
        del ref  # over 100 MB of doubles at the largest shapes checked: not held through the timing
    del outs
    graphs = {name: _graph(call, sets) for name, call in calls.items()}

    graph_ms = {name: [] for name in calls}
    eager_us = {name: [] for name in calls}
    # Eager time is wall time over back-to-back calls. Not do_bench: it clears the L2 with a
    # 256 MB memset before every call, and that memset gives the host a head start (about
    # 0.1 ms on an H100) which hides the very host time this column is for.
    # Rounds interleave the implementations, each round in another order (common.round_order), so that the
    # clock's and the host's drift hit both alike.
    for i in range(rounds):
        for name in round_order(list(calls), i):
            graph_ms[name].append(device_ms(graphs[name].replay) / len(sets))
    cycles = {name: cycling(call, sets) for name, call in calls.items()}
    for name, fn in cycles.items():  # warm: the first rounds then time the same steady state as the last
        timing.host_us_per_call(fn, calls=_eager_calls(min(graph_ms[name])))
    for i in range(max(rounds, EAGER_ROUNDS)):
        for name in round_order(list(calls), i):
            eager_us[name].append(timing.host_us_per_call(cycles[name], calls=_eager_calls(min(graph_ms[name])),
                                                          warmup=EAGER_WARMUP))
    g = {name: statistics.median(t) * 1e3 for name, t in graph_ms.items()}
    e = {name: statistics.median(t) for name, t in eager_us.items()}
    return _row(shape, len(sets), g, e, configs, err, note)


def _staged(config: str) -> bool:
    """Whether a config text (common.tritonmm_config's: the path first) names a plan that stages operand copies."""
    return "+staged" in config.split()[0]


def _row(shape: Shape, copies, graph_us: dict, eager_us: dict, configs: tuple, rel_err, note=None) -> dict:
    """A sweep row from per-implementation times in microseconds and the (graph, eager) configs' texts; without
    a "torch" time (fp8 shapes torch._scaled_mm refuses, note says why) its columns and the ratios are None."""
    def ratio(times):
        return times["torch"] / times["tritonmm"] if "torch" in times else None
    graph_config, eager_config = configs
    return dict(shape=shape.text, M=shape.M, N=shape.N, K=shape.K, Z=shape.Z, layout=shape.layout, kind=shape.kind,
                cls=class_name(shape_class(shape)),
                dims_cls="/".join(class_name(size_class(d)) for d in (shape.M, shape.N, shape.K)), copies=copies,
                torch_graph_us=graph_us.get("torch"), tritonmm_graph_us=graph_us["tritonmm"],
                ratio_graph=ratio(graph_us), torch_eager_us=eager_us.get("torch"),
                tritonmm_eager_us=eager_us["tritonmm"], ratio_eager=ratio(eager_us),
                config=graph_config if graph_config == eager_config else f"{graph_config} (eager: {eager_config})",
                graph_staged=_staged(graph_config), eager_staged=_staged(eager_config), rel_err=rel_err, note=note)


def measure(dtype: str, shapes, rounds: int = 1, progress=None) -> list:
    """One row per shape (Shape, or (M, N, K, layout)) for dtype ('fp16', 'bf16' or 'fp8': pass
    shapes_for(dtype)); times are medians over interleaved rounds, in microseconds per product. progress,
    a progress.Steps, hears of each shape as it starts."""
    rows = []
    for shape in (Shape(*s) for s in shapes):
        if progress is not None:
            progress.step(f"{dtype} {shape.text} {shape.layout} ({shape.kind}, class {class_name(shape_class(shape))})")
        rows.append(dict(dtype=dtype, **_shape_row(dtype, shape, rounds)))
    return rows


def _column(rows: list, column: str):
    """(geomean, the row of the minimum) of the column's torch/tritonmm ratio over rows, or None without rows."""
    ratios = [r[f"ratio_{column}"] for r in rows]
    if not ratios:
        return None
    return math.exp(statistics.fmean(math.log(x) for x in ratios)), min(rows, key=lambda r: r[f"ratio_{column}"])


def _ratios(rows: list, unstaged: bool = False) -> str:
    """"graph geomean G, min m at S L; eager ...": each column over rows, or with unstaged over the rows whose
    plan for that column (a graph's or an eager call's) stages no operand copies."""
    parts = []
    for column in ("graph", "eager"):
        sub = [r for r in rows if not (unstaged and r.get(f"{column}_staged"))]
        stats = _column(sub, column)
        counted = f" ({len(sub)} shapes)" if unstaged else ""
        parts.append(f"{column}{counted} none" if stats is None else
                     f"{column}{counted} geomean {stats[0]:.2f}, min {stats[1][f'ratio_{column}']:.2f} "
                     f"at {stats[1]['shape']} {stats[1]['layout']}")
    return "; ".join(parts)


def summarize(rows: list) -> list:
    """Per dtype: a line with the geomean and minimum of the torch/tritonmm time ratio (above 1: tritonmm is
    faster), graph and eager, with the shape of each minimum, over the shapes with a torch time (the others,
    fp8 shapes torch._scaled_mm refuses, named); then the same over products whose plans stage no operand
    copies, per kind and per class (where rows have those)."""
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
        refused = (f" ({len(alone)} more that {base} refuses, tritonmm timed alone: {', '.join(alone)})"
                   if alone else "")
        lines.append(f"{dtype} over {len(sub)} shapes{refused}, {base} time / tritonmm time: " + _ratios(sub))
        if any(r.get("graph_staged") or r.get("eager_staged") for r in sub):
            lines.append(f"{dtype} not staged: " + _ratios(sub, unstaged=True))
        for field, label, order in (("kind", "kind", None), ("cls", "class", [class_name(c) for c in CLASSES])):
            groups = defaultdict(list)
            for r in sub:
                if r.get(field) is not None:
                    groups[r[field]].append(r)
            for key in sorted(groups, key=order.index if order else None):
                lines.append(f"{dtype} {label} {key} ({len(groups[key])}): " + _ratios(groups[key]))
    return lines
