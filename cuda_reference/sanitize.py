"""Runs every kernel of the ladder once on awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  --error-exitcode 1 python3 -m cuda_reference.sanitize
    compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m cuda_reference.sanitize
    compute-sanitizer --tool synccheck --error-exitcode 1 python3 -m cuda_reference.sanitize

Shapes are small (the tools slow kernels down a hundredfold) but hit every edge case:
partial tiles in M, N and K, rows that are not 16-byte aligned, and a single element; for
the 16-bit kernels also rows that are (the cp.async path, zero-filling the chunks past the
edge, with more K slices than pipeline stages). Every kernel runs in each dtype it takes.
Kernels built for another GPU (steps 12 to 16 need compute capability 9.0) are skipped.
Steps 13 to 16 read through TMA, which takes 16-byte aligned rows only (K and N multiples of
8): they run on TMA_SHAPES instead, shapes with partial tiles in M, N and K, a pair tile half
below M and more K slices than stages; step 15 also on a grid capped at one and at two clusters,
step 16 at one (CUDA_REFERENCE_MAX_CLUSTERS), so that each cluster walks several tiles, the ring
wraps across them and step 16's staging boxes are rewritten tile after tile. Step 16 also once with C
off a 16-byte boundary (its stores from registers). Every built variant of a kernel runs
(step 16's two rings, step 17's configs). Exits non-zero if any result is wrong.
`python3 -m cuda_reference.sanitize wmma cp_async` runs only the kernels named.
"""
import os
import sys

import torch

from . import KERNELS, matmul, runs_on

SHAPES = [(1, 1, 1), (130, 67, 45), (129, 257, 33), (64, 128, 16), (130, 264, 200)]
TMA_SHAPES = [(1, 8, 8), (129, 264, 40), (300, 136, 264), (64, 256, 16)]
# steps 15-16: grid caps: None (as many clusters as fit), then one (and for step 15 two) clusters
CLUSTER_CAPS = {"persistent": (None, "1", "2"), "tma_store": (None, "1")}
# Kernels whose epilogue depends on C's alignment: also run once into a C 2 bytes off 16.
UNALIGNED_C = ("tma_store",)
# Relative Frobenius error against float64 on the same (rounded) inputs: fp32 accumulation,
# plus the rounding of C to the output dtype.
BOUND = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def main(only=()) -> int:
    bad = 0
    for kernel, info in KERNELS.items():
        if only and kernel not in only:
            continue
        if not runs_on(kernel):
            print(f"{kernel}: skipped, needs compute capability {'.'.join(map(str, info.capability))}")
            continue
        variants = [{p: v} for p, vals in info.params.items() for v in vals] or [{}]
        for params in variants:
            for cap in CLUSTER_CAPS.get(kernel, (None,)):
                if cap is None:
                    os.environ.pop("CUDA_REFERENCE_MAX_CLUSTERS", None)
                else:
                    os.environ["CUDA_REFERENCE_MAX_CLUSTERS"] = cap
                for dtype in info.dtypes:
                    for M, N, K in TMA_SHAPES if info.tma else SHAPES:
                        a = torch.randn(M, K, device="cuda").to(dtype)
                        b = torch.randn(K, N, device="cuda").to(dtype)
                        out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
                        matmul(a, b, kernel, out=out, **params)
                        ref = a.double() @ b.double()
                        err = ((out.double() - ref).norm() / ref.norm()).item()
                        bad += not err < BOUND[dtype]
                        grid = f" clusters<={cap}" if cap else ""
                        print(f"{kernel} {params}{grid} {str(dtype).removeprefix('torch.')} {M}x{N}x{K}: "
                              f"rel err {err:.1e}", flush=True)
            os.environ.pop("CUDA_REFERENCE_MAX_CLUSTERS", None)
            if kernel in UNALIGNED_C:
                for dtype in info.dtypes:
                    M, N, K = TMA_SHAPES[1]
                    a = torch.randn(M, K, device="cuda").to(dtype)
                    b = torch.randn(K, N, device="cuda").to(dtype)
                    out = torch.full((M * N + 1,), float("nan"), dtype=dtype, device="cuda")[1:].view(M, N)
                    matmul(a, b, kernel, out=out, **params)
                    ref = a.double() @ b.double()
                    err = ((out.double() - ref).norm() / ref.norm()).item()
                    bad += not err < BOUND[dtype]
                    print(f"{kernel} {params} C unaligned {str(dtype).removeprefix('torch.')} {M}x{N}x{K}: "
                          f"rel err {err:.1e}", flush=True)
    print("wrong results:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(tuple(sys.argv[1:])))
