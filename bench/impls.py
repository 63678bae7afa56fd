"""One registry of every implementation the benchmark runs, at each level of tiling."""
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, NamedTuple

import torch

import tritonmm

from .common import tuning_on

# The naive CUDA kernels take ~0.2 s a call at 8192^3; above this many multiply-adds they are skipped.
SLOW_CAP = 4096 ** 3
SLOW = {"cuda naive", "cuda coalesced"}


# tritonmm's input_precision for each float32 table (16-bit tables pass None).
PRECISIONS = {"fp32": "ieee", "tf32": "tf32", "tf32x3": "tf32x3"}

# The row of tritonmm as its planner runs it (no pinned config), named by how the config was picked:
# tuned at the first call of a shape, or with TRITONMM_AUTOTUNE=0 (--quick's default) the untuned default.
TUNED, UNTUNED = "tritonmm (autotuned)", "tritonmm (default config)"
PLANNED = (TUNED, UNTUNED)
PINNED_TILES = ((32, 32, 32, 4), (64, 64, 32, 4), (128, 128, 32, 8))  # (BM, BN, BK, warps): the tile sweep's rows


def planned_name() -> str:
    """TUNED, or UNTUNED where TRITONMM_AUTOTUNE=0 turns tuning off for this process."""
    return TUNED if tuning_on() else UNTUNED


class Impl(NamedTuple):
    name: str
    level: str  # thread | gluon | block | library
    tile: tuple | None  # (BM, BN) one block owns, for the bytes model; None when unknown
    precisions: tuple  # which tables it appears in: "fp32", "tf32", "fp16", "bf16"
    run: Callable  # run(a, b, out) -> None
    pinned: dict | None = None  # a pinned tritonmm config
    refuses: Callable | None = None  # refuses(a, b) -> why this implementation does not take the operands, or None


def _tile(text: str) -> tuple:
    """(BM, BN) from a tile text such as "128x256" or "128x128x8_256t"."""
    return tuple(int(v) for v in text.split("_")[0].split("x")[:2])


def _later_steps(dtype, precisions: tuple) -> list:
    """The ladder's steps after 12 that take dtype and run on this GPU, each built parameter value its own row,
    in step order: the steps the CUDA ladder grows are in every table without naming them here."""
    from cuda_reference import KERNELS, runs_on
    rows = []
    for name, info in sorted(KERNELS.items(), key=lambda item: item[1].step):
        if info.step <= 12 or dtype not in info.dtypes or not runs_on(name):
            continue
        variants = [{}] if not info.params else [{p: v} for p, values in info.params.items() for v in values]
        for params in variants:
            label = " ".join(str(v) for v in params.values())
            tile = _tile(label) if "x" in label else _tile(info.tile)
            rows.append(Impl(f"cuda {name}" + (f" {label}" if label else ""), "thread", tile, precisions,
                             _cuda(name, **params), refuses=_cuda_refuses(name)))
    return rows


def _refusal(check, errors=(ValueError,)):
    """refuses(a, b): the text (up to its fix) of the error check(a, b) raises, or None where it raises none."""
    def refuses(a, b):
        try:
            check(a, b)
        except errors as e:
            return str(e).split(";")[0]
        return None
    return refuses


def _cuda_refuses(kernel):
    """The reason cuda_reference.matmul would refuse a and b for kernel (its ValueError's text), or None."""
    def check(a, b):
        import cuda_reference
        cuda_reference.check_operands(a, b, kernel)
    return _refusal(check)


def _cuda(kernel, **params):
    import cuda_reference
    return lambda a, b, out: cuda_reference.matmul(a, b, kernel, out=out, **params)


def _tritonmm(precision, config=None):
    def run(a, b, out):
        tritonmm.matmul(a, b, out=out, config=config, input_precision=precision)
    return run


def _gluon_rows(precisions: tuple) -> list:
    """The Gluon kernel's schedules (tritonmm/kernels/gluon_gemm.py) where it runs here: Triton >= 3.8 on a
    compute capability 9.0 GPU. The level between the ladder's threads and tritonmm's blocks: the same
    algorithm as tritonmm's TMA kernel, its warp groups, barriers and shared-memory ring written out."""
    from tritonmm.kernels import gluon_gemm
    if not gluon_gemm.available()[0]:
        return []
    refuses = _refusal(lambda a, b: gluon_gemm._check(a, b, None), (TypeError, ValueError))
    return [Impl(f"gluon {name}", "gluon", (s.tile_m, s.tile_n), precisions,
                 (lambda name: lambda a, b, out: gluon_gemm.matmul(a, b, out, schedule=name))(name), refuses=refuses)
            for name, s in gluon_gemm.SCHEDULES.items()]


def _torch(a, b, out):
    torch.mm(a, b, out=out)


def _torch_tf32(a, b, out):
    """cuBLAS on TF32 tensor cores, for the tf32x3 table (whose torch.mm row is IEEE SGEMM)."""
    flags = torch.backends.cuda.matmul
    saved, flags.fp32_precision = flags.fp32_precision, "tf32"
    try:
        torch.mm(a, b, out=out)
    finally:
        flags.fp32_precision = saved


def registry(precision: str, pinned: bool = True) -> list:
    """Every implementation for one table; precision is 'fp32' (IEEE), 'tf32', 'tf32x3' (float32 in
    three TF32 products, against SGEMM, whose error it matches, and against TF32), 'fp16' or 'bf16'.
    pinned=False leaves out tritonmm's pinned-tile rows (the tile sweep), as --quick does."""
    tm_prec = PRECISIONS.get(precision)
    impls = [Impl("torch.mm", "library", None, ("fp32", "tf32", "tf32x3", "fp16", "bf16"), _torch),
             Impl("torch.mm TF32", "library", None, ("tf32x3",), _torch_tf32)]
    if precision == "fp32":
        impls += [
            Impl("cuda naive", "thread", (1, 1), ("fp32",), _cuda("naive")),
            Impl("cuda coalesced", "thread", (1, 1), ("fp32",), _cuda("coalesced")),
            *[Impl(f"cuda tiled T={t}", "thread", (t, t), ("fp32",), _cuda("tiled", tile=t)) for t in (8, 16, 32)],
            Impl("cuda blocktile_1d", "thread", (64, 64), ("fp32",), _cuda("blocktile_1d")),
            Impl("cuda blocktile_2d", "thread", (128, 128), ("fp32",), _cuda("blocktile_2d")),
            Impl("cuda vectorized", "thread", (128, 128), ("fp32",), _cuda("vectorized")),
            *[Impl(f"cuda warptile {t}thr", "thread", (128, 128), ("fp32",), _cuda("warptile", threads=t))
              for t in (128, 256)],
            *[Impl(f"cuda double_buffer {n}blk/SM", "thread", (128, 128), ("fp32",), _cuda("double_buffer", blocks_per_sm=n))
              for n in (2, 1)],
            *_later_steps(torch.float32, ("fp32",)),
        ]
    if precision in ("fp16", "bf16"):  # the tensor-core rungs (steps 9 on) take the 16-bit dtype itself
        from cuda_reference import KERNELS, runs_on
        half = ("fp16", "bf16")
        impls += [
            Impl("cuda wmma", "thread", (128, 128), half, _cuda("wmma")),
            Impl("cuda mma_sync", "thread", (128, 128), half, _cuda("mma_sync")),
            *[Impl(f"cuda cp_async {t}", "thread", tuple(int(v) for v in t.split("x")[:2]), half,
                   _cuda("cp_async", tile=t)) for t in KERNELS["cp_async"].params["tile"]],
        ]
        if runs_on("wgmma"):  # Hopper's warpgroup MMA: compute capability 9.0 only
            impls.append(Impl("cuda wgmma", "thread", (128, 256), half, _cuda("wgmma")))
        impls += _later_steps(torch.bfloat16, half) + _gluon_rows(half)
    impls.append(Impl(planned_name(), "block", None, ("fp32", "tf32", "tf32x3", "fp16", "bf16"), _tritonmm(tm_prec)))
    for bm, bn, bk, warps in PINNED_TILES if pinned else ():
        cfg = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=3)
        impls.append(Impl(f"tritonmm {bm}x{bn}x{bk}", "block", (bm, bn), ("fp32", "tf32", "fp16", "bf16"),
                          _tritonmm(tm_prec, cfg), cfg))
    return [i for i in impls if precision in i.precisions]


def build_ladder_in_background() -> Future:
    """Starts building (or loading the cached build of) cuda_reference's extension on a worker thread and
    returns its future, whose result is the build's seconds. nvcc and the linker run as child processes, so
    the build overlaps whatever this thread does meanwhile (compiling Triton kernels), and a cold
    build stops costing its own minute of wall time. Wait for the future before running a rung: a second
    load() while the first is building would start a build of its own."""
    def build() -> float:
        from cuda_reference.build import load
        start = time.perf_counter()
        load()
        return time.perf_counter() - start
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cuda-ladder-build")
    future = pool.submit(build)
    pool.shutdown(wait=False)  # the thread ends with the build; nothing else is queued
    return future
