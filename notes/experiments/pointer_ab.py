"""Experiment (2026-11-22, session 3): the pointer kernel before and after session 3's rewrite.

Session 3's sweep ran unaligned products (3000x3001x2999, 2047x2049x2051) on the pointer path
at 0.23-0.31x torch.mm, where session 2 measured 0.84-0.87x. The rewrite (kernels/gemm.py)
wraps edge rows and columns instead of masking them, masks only the last partial K step, and
adds a batch axis and the epilogue. This times the session-2 kernel (copied below, frozen)
against the current one at pinned configs, on the same operands, interleaved.
Run on the device: PYTHONPATH=. python3 notes/experiments/pointer_ab.py
"""
import torch
import triton
import triton.language as tl
from tabulate import tabulate

from tritonmm import timing
from tritonmm.kernels.gemm import gemm_kernel
from tritonmm.kernels.tiles import tile_coords


@triton.jit
def session2_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid_m, pid_n = tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


CONFIGS = [(64, 64, 128, 4, 4), (64, 128, 64, 4, 4), (128, 128, 64, 8, 3), (128, 64, 64, 4, 4)]
rows = []
for M, N, K, layout in [(3000, 3001, 2999, "NN"), (2047, 2049, 2051, "NN"), (3072, 3072, 3072, "NN"),
                        (3000, 3008, 3000, "NN"), (1024, 16384, 4096, "NT"), (16, 4096, 14336, "NT")]:
    a = torch.randn(M, K, device="cuda").bfloat16()
    b = torch.randn(N, K, device="cuda").bfloat16().T if layout == "NT" else torch.randn(K, N, device="cuda").bfloat16()
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    for bm, bn, bk, warps, stages in CONFIGS:
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
        meta = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
        old = lambda: session2_kernel[grid](a, b, c, M, N, K, *a.stride(), *b.stride(), *c.stride(), **meta)  # noqa
        new = lambda: gemm_kernel[grid](a, b, c, None, M, N, K, 0, *a.stride(), 0, *b.stride(), 0, *c.stride(), 0, 0,  # noqa
                                        BIAS="none", ACTIVATION="none", INPUT_PRECISION="tf32", UPCAST=False, **meta)
        times = {"old": [], "new": []}
        for _ in range(3):
            for name, fn in (("old", old), ("new", new)):
                times[name].append(timing.median_ms(fn))
        o, n = sorted(times["old"])[1], sorted(times["new"])[1]
        rows.append([f"{M}x{N}x{K} {layout}", f"{bm}x{bn}x{bk} w{warps} s{stages}", f"{timing.tflops(M, N, K, o):.0f}",
                     f"{timing.tflops(M, N, K, n):.0f}", f"{o / n:.2f}"])
print(tabulate(rows, headers=["shape", "config", "session-2 TFLOP/s", "now TFLOP/s", "now speedup"]))
