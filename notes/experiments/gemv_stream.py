"""Experiment (session 9): can a decode product stream its weight at 85% of the read bandwidth?

Session 5 pinned tensor-core configs (16- and 64-row tiles, deep K, split-K) and session 8 the
narrow 64x32x256 tile: none streamed a rotated 4096x14336 bf16 weight above ~71% of the read
bandwidth, and cuBLAS sits at the same 58-72%. Untried: a GEMV without tensor cores and without
a shared-memory pipeline, where many small programs per SM (a few weight rows each, K in wide
chunks) keep the loads in flight by occupancy alone, and each program's rows are read as long
contiguous runs. Hypothesis: that reaches 85%+ at M = 1; if so, the pattern is what the tensor-
core configs lack. Measured against cuBLAS, tritonmm's tuned call, and the same weights read by
a plain Triton sum (this size's read ceiling), all in CUDA-graph replay with weights rotated
past the L2.

    PYTHONPATH=. python3 notes/experiments/gemv_stream.py
"""
import math

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, N, K, stride_xm, stride_wn, stride_ym,
                M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, STAGES: tl.constexpr):
    # y[m, n] = sum_k x[m, k] * w[n, k]; M rows of x (a few), K a multiple of BLOCK_K (experiment).
    pid = tl.program_id(0)
    offs_n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    w_ptrs = w_ptr + offs_n[:, None].to(tl.int64) * stride_wn + offs_k[None, :]
    if M == 1:
        acc = tl.zeros((BLOCK_N, BLOCK_K), tl.float32)
        for k in tl.range(0, K, BLOCK_K, num_stages=STAGES):
            w = tl.load(w_ptrs + k, mask=offs_n[:, None] < N)
            x = tl.load(x_ptr + k + offs_k)
            acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
        tl.store(y_ptr + offs_n, tl.sum(acc, axis=1).to(y_ptr.dtype.element_ty), mask=offs_n < N)
    else:
        offs_m = tl.arange(0, M)
        acc = tl.zeros((M, BLOCK_N), tl.float32)
        for k in tl.range(0, K, BLOCK_K, num_stages=STAGES):
            w = tl.load(w_ptrs + k, mask=offs_n[:, None] < N).to(tl.float32)
            x = tl.load(x_ptr + offs_m[:, None] * stride_xm + k + offs_k[None, :]).to(tl.float32)
            acc += tl.sum(w[None, :, :] * x[:, None, :], axis=2)
        tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :], acc.to(y_ptr.dtype.element_ty),
                 mask=offs_n[None, :] < N)


@triton.jit
def read_kernel(w_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    # Each program sums a contiguous run of BLOCK elements: the read ceiling at this size.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(w_ptr + offs, mask=offs < numel)
    tl.store(out_ptr + tl.program_id(0), tl.sum(v.to(tl.float32)))


def gemv(x, w, y, bn, bk, warps, stages):
    M, K = x.shape
    N = w.shape[0]
    gemv_kernel[(triton.cdiv(N, bn),)](x, w, y, N, K, x.stride(0), w.stride(0), y.stride(0), M=M, BLOCK_N=bn,
                                       BLOCK_K=bk, STAGES=stages, num_warps=warps)
    return y


L2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.randn(1 << 28, device="cuda")
read_tbps = big.numel() * 4 / do_bench(lambda: big.sum(), warmup=20, rep=200) / 1e9
del big
print(f"read bandwidth (torch sum of 1 GiB): {read_tbps:.2f} TB/s", flush=True)

SHAPES = [(1, 4096, 14336), (1, 14336, 4096), (1, 4096, 4096), (4, 14336, 4096), (16, 14336, 4096)]
# (BLOCK_N, BLOCK_K, num_warps, stages)
CONFIGS = [(4, 1024, 4, 1), (8, 512, 4, 1), (2, 2048, 4, 1), (4, 1024, 4, 2), (4, 1024, 4, 3), (8, 1024, 8, 1),
           (16, 256, 4, 1), (1, 4096, 4, 1), (2, 1024, 2, 1)]
SMALL_M = [(8, 256, 4, 1), (4, 512, 4, 1), (16, 128, 4, 1), (8, 256, 4, 2)]
rows = []
for M, N, K in SHAPES:
    w_bytes = N * K * 2
    n = max(2, math.ceil(2 * L2 / w_bytes))
    ws = [torch.randn(N, K, device="cuda").bfloat16() for _ in range(n)]
    x = torch.randn(M, K, device="cuda").bfloat16()
    ref = x.double() @ ws[0].double().T

    def graph_us(call):
        call(ws[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for w in ws:
                call(w)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for w in ws:
                call(w)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    def row(name, us, base, err=""):
        rows.append([f"{M}x{N}x{K}", name, f"{us:.1f}", f"{base / us:.2f}", f"{w_bytes / us / 1e6 / read_tbps:.0%}", err])
        print(*rows[-1], flush=True)

    base = graph_us(lambda w: torch.mm(x, w.T))
    row("torch.mm", base, base)
    part = torch.empty(triton.cdiv(N * K, 8192), device="cuda")
    row("read (triton sum, 8192 a program)", graph_us(lambda w: read_kernel[(part.numel(),)](w, part, N * K, BLOCK=8192)), base)
    row("tritonmm.mm tuned", graph_us(lambda w: tritonmm.mm(x, w.T)), base)
    y = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    for bn, bk, warps, stages in (CONFIGS if M == 1 else SMALL_M):
        name = f"gemv {bn}x{bk} w{warps} s{stages}"
        try:
            y.fill_(float("nan"))
            err = ((gemv(x, ws[0], y, bn, bk, warps, stages).double() - ref).norm() / ref.norm()).item()
            row(name, graph_us(lambda w: gemv(x, w, y, bn, bk, warps, stages)), base, f"{err:.1e}")
        except Exception as e:  # noqa: BLE001
            rows.append([f"{M}x{N}x{K}", name, type(e).__name__, "", "", str(e)[:60]])
            print(*rows[-1], flush=True)
    del ws
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "% read BW", "rel err"], disable_numparse=True))
