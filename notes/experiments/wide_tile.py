"""Experiment (session 9): a 128x192 tile for the mid-size squares, from two accumulators.

1536^3 runs at 0.69x cuBLAS: 72 tiles of 128x256 leave 60 of 132 SMs idle, and 144 of 128x128
run as 1.09 waves. cuBLAS's 13 us matches 96 tiles of 128x192 (session 7). Triton tensors are
powers of two, but a 192-wide tile is a 128-wide and a 64-wide accumulator over the same A tile:
two wgmmas a K step (N = 128 and 64), two B descriptors, two C stores. Hypothesis: at 1536^3 it
runs 0.75x of the 128x256 tile's time (the work per SM), about 14 us, 0.9x cuBLAS; at 3072^3 the
384 tiles fill 2.9 waves (128x256: 2.2) and pass the 0.92x of the sweep.

A standalone copy of the TMA kernel's loop (NN layout, no epilogue), compared with itself at
128x256 and 128x128, tritonmm's tuned call and torch.mm, in graph replay with operands rotated
past the L2. Also prints cuBLAS's kernel names and grids (the profiler) for the slow squares.

    PYTHONPATH=. python3 notes/experiments/wide_tile.py
"""
import json
import math
import os
import tempfile

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor

import tritonmm
from tritonmm.kernels.tiles import tile_coords

NUM_SMS = torch.cuda.get_device_properties(0).multi_processor_count


@triton.jit
def wide_kernel(a_desc, b0_desc, b1_desc, c0_desc, c1_desc, M, N, K,
                BLOCK_M: tl.constexpr, BN0: tl.constexpr, BN1: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BN0 + BN1)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * (BN0 + BN1)
        acc0 = tl.zeros((BLOCK_M, BN0), dtype=tl.float32)
        if BN1 > 0:
            acc1 = tl.zeros((BLOCK_M, BN1), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_m, off_k])
            acc0 = tl.dot(a, b0_desc.load([off_k, off_n]), acc0)
            if BN1 > 0:
                acc1 = tl.dot(a, b1_desc.load([off_k, off_n + BN0]), acc1)
        c0_desc.store([off_m, off_n], acc0.to(c0_desc.dtype))
        if BN1 > 0:
            c1_desc.store([off_m, off_n + BN0], acc1.to(c1_desc.dtype))


def wide(a, b, c, bm, bn0, bn1, bk, warps, stages, group=8):
    M, K = a.shape
    N = b.shape[1]
    a_d = TensorDescriptor.from_tensor(a, [bm, bk])
    b0 = TensorDescriptor.from_tensor(b, [bk, bn0])
    b1 = TensorDescriptor.from_tensor(b, [bk, max(bn1, 16)])
    c0 = TensorDescriptor.from_tensor(c, [bm, bn0])
    c1 = TensorDescriptor.from_tensor(c, [bm, max(bn1, 16)])
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn0 + bn1)
    wide_kernel[(min(tiles, NUM_SMS),)](a_d, b0, b1, c0, c1, M, N, K, BLOCK_M=bm, BN0=bn0, BN1=bn1, BLOCK_K=bk,
                                        GROUP_M=group, NUM_SMS=NUM_SMS, num_warps=warps, num_stages=stages)
    return c


def cublas_kernels(shapes):
    """cuBLAS's kernel name, grid and block for each product (torch.profiler's chrome trace)."""
    out = []
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda").bfloat16()
        b = torch.randn(K, N, device="cuda").bfloat16()
        torch.mm(a, b)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            torch.mm(a, b)
            torch.cuda.synchronize()
        path = os.path.join(tempfile.mkdtemp(), "trace.json")
        prof.export_chrome_trace(path)
        for ev in json.load(open(path))["traceEvents"]:
            if ev.get("cat") == "kernel":
                args = ev.get("args", {})
                out.append([f"{M}x{N}x{K}", ev["name"][:150], args.get("grid"), args.get("block"),
                            args.get("shared memory"), args.get("registers per thread"), f"{ev.get('dur')}"])
    return out


torch.manual_seed(0)
for r in cublas_kernels([(768, 768, 768), (1024, 1024, 1024), (1536, 1536, 1536), (3072, 3072, 3072),
                         (77, 4099, 2049), (1, 14336, 4096)]):
    print(*r, flush=True)

L2 = torch.cuda.get_device_properties(0).L2_cache_size
# (BLOCK_M, BN0, BN1, BLOCK_K, warps, stages)
CONFIGS = {
    (768, 768, 768): [(64, 128, 0, 64, 4, 4), (64, 128, 64, 64, 4, 4), (64, 64, 0, 64, 4, 4), (128, 128, 64, 64, 8, 4),
                      (64, 64, 32, 64, 4, 4), (128, 64, 0, 64, 4, 4)],
    (1024, 1024, 1024): [(128, 128, 0, 64, 8, 4), (64, 128, 0, 64, 4, 4), (128, 64, 0, 64, 4, 4), (64, 64, 0, 64, 4, 4),
                         (128, 128, 64, 64, 8, 4), (64, 128, 64, 64, 4, 4)],
    (1536, 1536, 1536): [(128, 256, 0, 64, 8, 3), (128, 128, 0, 64, 8, 4), (128, 128, 64, 64, 8, 3),
                         (128, 128, 64, 64, 8, 4), (128, 128, 64, 64, 4, 4), (64, 128, 64, 64, 4, 4)],
    (3072, 3072, 3072): [(128, 256, 0, 64, 8, 3), (128, 128, 64, 64, 8, 3), (128, 128, 64, 64, 8, 4)],
    (6144, 6144, 6144): [(128, 256, 0, 64, 8, 3), (128, 128, 64, 64, 8, 4)],
}
rows = []
for (M, N, K), cfgs in CONFIGS.items():
    pair = (M * K + K * N) * 2
    n = max(1, min(8, math.ceil(2 * L2 / pair)))
    As = [torch.randn(M, K, device="cuda").bfloat16() for _ in range(n)]
    Bs = [torch.randn(K, N, device="cuda").bfloat16() for _ in range(n)]
    ref = As[0].double() @ Bs[0].double()
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

    def graph_us(call):
        for a, b in zip(As, Bs):
            call(a, b)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for a, b in zip(As, Bs):
                call(a, b)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    def row(name, us, base, err=""):
        rows.append([f"{M}x{N}x{K}", name, f"{us:.1f}", f"{2 * M * N * K / us / 1e6:.0f}", f"{base / us:.2f}", err])
        print(*rows[-1], flush=True)

    base = graph_us(lambda a, b: torch.mm(a, b))
    row("torch.mm", base, base)
    tritonmm.mm(As[0], Bs[0])  # tune outside the capture
    row("tritonmm.mm tuned", graph_us(lambda a, b: tritonmm.mm(a, b)), base)
    for bm, bn0, bn1, bk, warps, stages in cfgs:
        name = f"{bm}x{bn0}+{bn1}x{bk} w{warps} s{stages}"
        try:
            c.fill_(float("nan"))
            err = ((wide(As[0], Bs[0], c, bm, bn0, bn1, bk, warps, stages).double() - ref).norm() / ref.norm()).item()
            row(name, graph_us(lambda a, b: wide(a, b, c, bm, bn0, bn1, bk, warps, stages)), base, f"{err:.1e}")
        except Exception as e:  # noqa: BLE001
            rows.append([f"{M}x{N}x{K}", name, type(e).__name__, "", "", str(e)[:80]])
            print(*rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "impl", "graph us", "TFLOP/s", "x cuBLAS", "rel err"], disable_numparse=True))
