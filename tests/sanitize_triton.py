"""Runs tritonmm's kernels on awkward shapes on every path, for compute-sanitizer:

    compute-sanitizer --tool memcheck  --error-exitcode 1 python3 tests/sanitize_triton.py
    compute-sanitizer --tool racecheck --error-exitcode 1 python3 tests/sanitize_triton.py

The Triton counterpart of cuda_reference/sanitize.py (a script, not a test module: pytest does
not collect it). Covers the pointer and the TMA kernel (TMA_MIN_MACS lowered to 0, so small
products take it on Hopper, unaligned ones through staged copies), split-K's two passes on either, the
one-row kernel, every dtype and float32 precision in every layout (TF32
stages non-K-major operands through the transpose kernel first), batched products with a
broadcast operand, and every bias kind with every activation. Shapes are small (the tools
slow kernels down a hundredfold) but have partial tiles in M, N and K, rows that are not
16-byte aligned, and a single element. Outputs start as NaN, so an element never written
fails. Prints one summary line (and each wrong result); exits 1 on a wrong result, 0 without
a GPU.
"""
import collections
import os
import sys

import torch

import tritonmm
from bench.common import rel_err  # ||out - ref|| over ||ref|| (or ||scale||); inf for NaN or inf
from tritonmm import config_space, device, planner, thresholds
from tritonmm.kernels.tiles import ACTIVATIONS, BIAS_KINDS
from tritonmm.tune import operands

PRECISIONS = [(torch.float16, None, 2e-3), (torch.bfloat16, None, 1e-2),
              (torch.float32, "ieee", 1e-5), (torch.float32, "tf32", 2e-3), (torch.float32, "tf32x3", 1e-5)]
# Odd sizes reach only the pointer kernel; (64, 128, 16) and (136, 72, 40) have 16-byte aligned
# rows in every dtype, so the TMA kernel takes them, the second with partial tiles everywhere.
# (130, 67, 131): unaligned with K past one 64-wide copy tile, so staging copies of A and B have inner
# (unmasked) tiles too. (24, 72, 40): aligned, few rows: the TMA kernel's short 16-row tiles, two row tiles.
SHAPES = [(1, 1, 1), (130, 67, 45), (129, 257, 33), (64, 128, 16), (136, 72, 40), (130, 67, 131), (24, 72, 40)]
EPILOGUE_SHAPES = [(130, 67, 45), (136, 72, 40)]
BATCHES = [((3,), (1,)), ((2, 1), (3,))]  # broadcast batch dims of a and b


def bf16_bias(kind: str, M: int, N: int):
    """A bias of one of tritonmm.layout.bias_kind's kinds, for an (M, N) product."""
    if kind == "none":
        return None
    return torch.randn({"row": (N,), "column": (M, 1), "matrix": (M, N)}[kind], device="cuda").bfloat16()


def magnitude(a, b, bias=None) -> torch.Tensor:
    """(|a| @ |b| + |bias|) / sqrt(K) in float64: the scale of a product's rounding errors (with a bias and an
    activation, whose slopes are at most about 1.1), over sqrt(K). On random normal operands its norm is about
    0.64 of the result's (2/pi * K against sqrt(K) per element), so rel_err keeps measuring against the result;
    where the result cancels to near zero (one element whose a * b is close to -bias), it measures against this
    instead of the cancellation: a 1x1x1 TF32 product with a bias and silu read 2.7e-3 against the result."""
    scale = a.double().abs() @ b.double().abs()
    scale = planner.epilogue_reference(scale, None if bias is None else bias.double().abs(), "none")
    return scale / a.shape[-1] ** 0.5


def nan_like(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


def main() -> int:
    if not torch.cuda.is_available():
        print("sanitize_triton: no CUDA GPU, nothing to run")
        return 0
    # Heuristic configs: tuning would time every config of each space under the tool's slowdown.
    os.environ.setdefault("TRITONMM_AUTOTUNE", "0")
    torch.manual_seed(0)
    wrong, count, paths = 0, 0, collections.Counter()

    def check(what: str, out, ref, bound, scale=None):
        nonlocal wrong, count
        count += 1
        err = rel_err(out, ref, scale)
        if not err < bound:
            wrong += 1
            print(f"WRONG {what}: rel err {err:.1e}", flush=True)

    # The pointer path, then TMA for every product, unaligned ones through staged copies.
    for tma_min_macs in (float("inf"), 0):
        thresholds.OVERRIDES["tma_min_macs"] = tma_min_macs
        thresholds.OVERRIDES["tma_min_rows"] = 0 if tma_min_macs == 0 else 2
        thresholds.OVERRIDES["few_tiles_per_sm"] = 0 if tma_min_macs == 0 else 1
        thresholds.OVERRIDES["stage_min_macs_per_byte"] = 0 if tma_min_macs == 0 else float("inf")
        thresholds.OVERRIDES["ieee_tma"] = tma_min_macs == 0  # IEEE float32 on the TMA kernel too (ieee-pointer)
        thresholds.OVERRIDES["stage_eager_min_macs"] = 0
        thresholds.OVERRIDES["stage_eager_native_min_macs"] = 0
        for dtype, precision, bound in PRECISIONS:
            for M, N, K in SHAPES:
                # NN three times on fresh operands: the later calls relaunch the first one's kernels
                # (fast_launch.py, on Triton 3.6 around its launcher, tensor maps cached by address).
                for layout in ("NN", "NN", "NN", "NT", "TN", "TT"):
                    a, b = operands(M, N, K, dtype, layout, "cuda")
                    out = tritonmm.mm(a, b, out=nan_like((M, N), dtype), input_precision=precision)
                    paths[planner.chosen(a, b, tritonmm.precision.resolve_precision(dtype, precision))[1]] += 1
                    check(f"mm {dtype} {precision} {layout} {M}x{N}x{K} (TMA_MIN_MACS={tma_min_macs})",
                          out, a.double() @ b.double(), bound)
        for M, N, K in EPILOGUE_SHAPES:
            a, b = operands(M, N, K, torch.bfloat16, "NN", "cuda")
            for kind in BIAS_KINDS:
                bias = bf16_bias(kind, M, N)
                for activation in ACTIVATIONS:
                    out = planner.product(a, b, bias=bias, activation=activation, precision="native",
                                       out=nan_like((M, N), torch.bfloat16))
                    paths[planner.chosen(a, b, "native", bias, activation)[1]] += 1
                    ref = planner.epilogue_reference(a.double() @ b.double(), None if bias is None else bias.double(),
                                                  activation)
                    check(f"epilogue {kind} bias, {activation} {M}x{N}x{K} (TMA_MIN_MACS={tma_min_macs})",
                          out, ref, 1e-2, magnitude(a, b, bias))
    # Wave-tail split (TMA): one wave of 128x128 tiles plus 6, so rows [0, 64 * SMs) and the rest in two
    # launches of row views; aligned, and unaligned through staged copies, with a bias that varies by row.
    facts = device.facts(torch.device("cuda"))
    if facts.tma:
        for N, K in ((256, 40), (255, 41)):
            M = 128 * (facts.num_sms // 2 + 3) - 37
            a, b = operands(M, N, K, torch.float16, "TN", "cuda")
            bias = torch.randn(M, 1, device="cuda").half()
            tail = config_space.make_config(128, 128, 64, 3, 4, TAIL=1)
            out = planner.product(a, b, bias=bias, activation="relu", precision="native", config=tail,
                               out=nan_like((M, N), torch.float16))
            paths["tma wave-tail"] += 1
            ref = planner.epilogue_reference(a.double() @ b.double(), bias.double(), "relu")
            check(f"wave-tail 128x128 {M}x{N}x{K}", out, ref, 2e-3, magnitude(a, b, bias))
    # The staging copies on their own, inner (unmasked) and edge tiles, into NaN-filled aligned buffers:
    # unaligned rows into aligned ones, from a transposed view, transposing, and the TF32 split (its parts
    # sum to x within 2**-22 relative).
    def buffer(rows, cols, like):
        return tritonmm.staging.aligned_empty(rows, cols, like).fill_(float("nan"))

    # Each of copy_kernel's tiles (thresholds.TABLE["sm90"].copy_block, COPY_SMALL_BLOCK), forced through the rule's bar.
    shipped_bar = thresholds.TABLE["sm90"].copy_min_programs_per_sm
    for tile, bar in (("64x64", 0), ("32x32", 10 ** 9)):
        thresholds.OVERRIDES["copy_min_programs_per_sm"] = bar
        for dtype in (torch.bfloat16, torch.float32, torch.float8_e4m3fn):
            for R, C in ((67, 131), (130, 257), (64, 64)):
                x = torch.randn(R, C, device="cuda").to(dtype)
                for name, src, dst in (("aligned copy", x, buffer(R, C, x)),
                                       ("copy of a view", x.T, buffer(C, R, x)),
                                       ("transposing copy", x, buffer(C, R, x).T)):
                    paths["copy"] += 1
                    check(f"{name} {dtype} {R}x{C} {tile}", tritonmm.staging.copy(src, dst).float(), src.float(), 1e-30)
                w = torch.randn(C + 3, R, device="cuda").to(dtype)[:C].T  # a second copy in the same launch
                ya, yb = buffer(R, C, x), buffer(C, R, w).T
                tritonmm.staging.copy(x, ya, pair=(w, yb))
                paths["copy"] += 2
                check(f"pair copy, first {dtype} {R}x{C} {tile}", ya.float(), x.float(), 1e-30)
                check(f"pair copy, second {dtype} {R}x{C} {tile}", yb.float(), w.float(), 1e-30)
                if dtype == torch.float32:
                    parts = buffer(2 * R, C, x)
                    tritonmm.staging.copy(x, parts[:R], lo=parts[R:])
                    paths["copy"] += 1
                    check(f"TF32 split {R}x{C} {tile}", parts[:R].double() + parts[R:].double(), x, 2.0 ** -21)
    thresholds.OVERRIDES["copy_min_programs_per_sm"] = shipped_bar
    # Split-K in 3 slices with a bias and silu in the second pass: on the pointer kernel, and on Hopper on the TMA
    # kernel too (every product forced onto it, as above; its units' fp32 sums stored through pointers).
    for kernel in ("pointer", "tma") if facts.tma else ("pointer",):
        thresholds.OVERRIDES["tma_min_macs"] = thresholds.OVERRIDES["stage_min_macs_per_byte"] = 0 if kernel == "tma" else float("inf")
        thresholds.OVERRIDES["ieee_tma"] = kernel == "tma"
        for dtype, precision, bound in PRECISIONS:
            for M, N, K in SHAPES:
                a, b = operands(M, N, K, dtype, "TN" if kernel == "tma" else "NT", "cuda")
                cfg = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, SPLIT_K=3, num_warps=4, num_stages=2)
                bias = torch.randn(N, device="cuda").to(dtype)
                out = tritonmm.linear(a, b.T, bias, "silu", config=cfg, input_precision=precision)
                paths[f"{kernel} split-K"] += 1
                ref = planner.epilogue_reference(a.double() @ b.double(), bias.double(), "silu")
                check(f"{kernel} split-K {dtype} {precision} {M}x{N}x{K}", out, ref, bound, magnitude(a, b, bias))
    thresholds.OVERRIDES["tma_min_macs"] = thresholds.OVERRIDES["stage_min_macs_per_byte"] = float("inf")
    # The one-row kernel: one row, three rows pinned, batched. silu, not gelu: at 1x1x1 the one element's
    # relative error is the activation's, and fp32's erf form loses digits to cancellation where x << 0.
    for dtype, precision, bound in PRECISIONS:
        for M, N, K in ((1, 67, 45), (1, 1, 1), (3, 130, 257)):
            for layout in ("NN", "NT", "TN", "TT"):
                a, b = operands(M, N, K, dtype, layout, "cuda")
                bias = torch.randn(N, device="cuda").to(dtype)
                out = planner.product(a, b, bias=bias, activation="silu", out=nan_like((M, N), dtype),
                                   precision=tritonmm.precision.resolve_precision(dtype, precision),
                                   config=config_space.make_config(1, 8, 32, 1, 4))
                paths["one-row"] += 1
                ref = planner.epilogue_reference(a.double() @ b.double(), bias.double(), "silu")
                check(f"one-row {dtype} {precision} {layout} {M}x{N}x{K}", out, ref, bound, magnitude(a, b, bias))
        a, b = torch.randn(3, 1, 45, device="cuda").to(dtype), torch.randn(1, 45, 67, device="cuda").to(dtype)
        out = tritonmm.matmul(a, b, config=dict(BLOCK_M=1, BLOCK_N=16, BLOCK_K=16), input_precision=precision)
        paths["one-row"] += 1
        check(f"one-row batched {dtype} {precision}", out, a.double() @ b.double(), bound)
    for dtype, precision, bound in PRECISIONS:  # batched products run on the pointer kernel only
        for a_batch, b_batch in BATCHES:
            a = torch.randn(*a_batch, 33, 31, device="cuda").to(dtype)
            b = torch.randn(*b_batch, 31, 65, device="cuda").to(dtype)
            out = tritonmm.matmul(a, b, input_precision=precision)
            check(f"batched {dtype} {precision} {tuple(a.shape)} @ {tuple(b.shape)}", out, a.double() @ b.double(),
                  bound)
    print(f"sanitize_triton: {count} products ({dict(paths)} by path, batched aside), {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
