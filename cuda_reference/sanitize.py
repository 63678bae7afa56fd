"""Runs every kernel of the ladder once on awkward shapes, for compute-sanitizer:

    compute-sanitizer --tool memcheck  --error-exitcode 1 python3 -m cuda_reference.sanitize
    compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m cuda_reference.sanitize

Shapes are small (the tools slow kernels down a hundredfold) but hit every edge case:
partial tiles in M, N and K, rows that are not 16-byte aligned, and a single element.
Exits non-zero if any result is wrong.
"""
import sys

import torch

from . import KERNELS, matmul

SHAPES = [(1, 1, 1), (130, 67, 45), (129, 257, 33), (64, 128, 16)]


def main() -> int:
    bad = 0
    for kernel, info in KERNELS.items():
        variants = [{p: v} for p, vals in info.params.items() for v in vals] or [{}]
        for params in variants:
            for M, N, K in SHAPES:
                a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
                out = torch.full((M, N), float("nan"), device="cuda")
                matmul(a, b, kernel, out=out, **params)
                ref = a.double() @ b.double()
                err = ((out.double() - ref).norm() / ref.norm()).item()
                bad += not err < 1e-5
                print(f"{kernel} {params} {M}x{N}x{K}: rel err {err:.1e}", flush=True)
    print("wrong results:", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
