"""The sweep: tritonmm against torch.mm over the shapes the planner is tuned on.

    python -m bench --preset sweep --rounds 3 --out results/sweep/

Two times per implementation and shape. "graph": the calls captured in a CUDA graph, so the
host's launch path is gone and only the kernels remain; small products would otherwise be
timed as host time. "eager": back-to-back plain calls, host time included, as an eager user
meets them. Both rotate through operand copies, enough (up to 8) that one pass over them
exceeds twice the L2, as a model's layers each bring their own weights.
"""
import itertools
import math
import statistics
from collections import defaultdict

import torch

import tritonmm
from tritonmm import timing
from tritonmm.plan import chosen

from .suites import _copies

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

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
# Above this many multiply-adds the float64 reference is skipped (error shown as '-'): on a GPU
# with slow float64 it would take longer than the timing.
REF_MAX_MACS = 2 ** 36


def _operands(M, N, K, layout, dtype):
    a = torch.randn(M, K, device="cuda").to(dtype)
    if layout == "NT":
        return a, torch.randn(N, K, device="cuda").to(dtype).T
    return a, torch.randn(K, N, device="cuda").to(dtype)


def _graph(call, sets):
    """A CUDA graph that runs call once per operand copy. The calls run once on a side stream
    first, as torch's documentation asks: lazy set-up (cuBLAS's handle and workspace for a new
    stream) must not happen inside capture."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for a, b in sets:
            call(a, b)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a, b in sets:
            call(a, b)
    return graph


def _eager_calls(graph_ms: float) -> int:
    """Enough back-to-back calls for about 50 ms of eager timing, within host_us_per_call's
    usual 3000 calls: 8192-sized products would otherwise take seconds per measurement."""
    return max(20, min(3000, int(50 / graph_ms)))


def _shape_row(dtype, M, N, K, layout, rounds):
    sets = [_operands(M, N, K, layout, dtype) for _ in range(_copies((M * K + K * N) * dtype.itemsize))]
    outs = {name: torch.empty(M, N, dtype=dtype, device="cuda") for name in ("torch", "tritonmm")}
    calls = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]),
             "tritonmm": lambda a, b: tritonmm.matmul(a, b, out=outs["tritonmm"])}
    # tritonmm tunes at its first eager call of a shape; inside capture it could only take the
    # heuristic, so every call runs eagerly before any graph is captured.
    for call in calls.values():
        call(*sets[0])
    cfg, path = chosen(*sets[0], "native")  # the config the warm-up tuned, now cached
    err = None
    if M * N * K <= REF_MAX_MACS:
        ref = sets[0][0].double() @ sets[0][1].double()
        err = ((outs["tritonmm"].double() - ref).norm() / ref.norm()).item()
        del ref  # over 100 MB of doubles at the largest shapes checked: not held through the timing
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
            graph_ms[name].append(timing.median_ms(graphs[name].replay) / len(sets))
            eager_us[name].append(timing.host_us_per_call(eager(call), calls=_eager_calls(graph_ms[name][0])))
    g = {name: statistics.median(t) * 1e3 for name, t in graph_ms.items()}
    e = {name: statistics.median(t) for name, t in eager_us.items()}
    return dict(shape=f"{M}x{N}x{K}", M=M, N=N, K=K, layout=layout, copies=len(sets),
                torch_graph_us=g["torch"], tritonmm_graph_us=g["tritonmm"], ratio_graph=g["torch"] / g["tritonmm"],
                torch_eager_us=e["torch"], tritonmm_eager_us=e["tritonmm"], ratio_eager=e["torch"] / e["tritonmm"],
                config=f"{path} {cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}x{cfg.kwargs['BLOCK_K']} "
                       f"w{cfg.num_warps} s{cfg.num_stages}"
                       + (f" split-K {cfg.kwargs['SPLIT_K']}" if cfg.kwargs.get("SPLIT_K", 1) > 1 else ""),
                rel_err=err)


def measure(dtype: str, shapes, rounds: int = 1, progress=None) -> list:
    """One row per shape for dtype ('fp16' or 'bf16'); times are medians over interleaved
    rounds, in microseconds per product. progress, if given, is updated once per shape."""
    rows = []
    for M, N, K, layout in shapes:
        rows.append(dict(dtype=dtype, **_shape_row(DTYPES[dtype], M, N, K, layout, rounds)))
        if progress is not None:
            progress.update(1)
    return rows


def summarize(rows: list) -> list:
    """One line per dtype: geomean and minimum of the torch/tritonmm time ratio (above 1:
    tritonmm is faster), graph and eager, with the shape of each minimum."""
    by_dtype = defaultdict(list)
    for r in rows:
        by_dtype[r["dtype"]].append(r)
    lines = []
    for dtype, sub in by_dtype.items():
        parts = []
        for kind in ("graph", "eager"):
            ratios = [r[f"ratio_{kind}"] for r in sub]
            worst = min(sub, key=lambda r: r[f"ratio_{kind}"])
            geomean = math.exp(statistics.fmean(math.log(x) for x in ratios))
            parts.append(f"{kind} geomean {geomean:.2f}, min {worst[f'ratio_{kind}']:.2f} "
                         f"at {worst['shape']} {worst['layout']}")
        lines.append(f"{dtype} over {len(sub)} shapes, torch.mm time / tritonmm time: " + "; ".join(parts))
    return lines
