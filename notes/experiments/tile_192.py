"""Experiment (session 19, run 1): tiles of 192 columns (or rows) on the TMA kernel, as two dots.

The class of shapes furthest below cuBLAS on unseen draws is a last wave of few tiles: 1536^3 has 144 tiles of
128x128 for 132 SMs (two rounds for 1.09 of work; 0.73x cuBLAS), 842x3072x3072 168 (0.69x), 947x3072x8192 96 of
128x256 (one round at 73% of the SMs; 0.84x). cuBLAS runs 1536^3 on 192-wide tiles (session 9). Triton's tensors
are powers of two, but a program can own a 128x192 tile as two accumulators, 128x128 and 128x64, fed from one A
tile and two B descriptors (blocks of 128 and 64 columns): 1536^3 then has 96 tiles in one round of 1.5 tiles'
work where 128x128 takes two rounds (predicted 25% faster), 842x3072x3072 112, 947x3072x8192 128.
The cost: each K step reads A's tile from shared memory twice (wgmma on 128 then 64 columns): 107 B/clk of the
SM's 128 against 96 for 128x128 and 80 for 128x256.

This kernel is gemm_tma_kernel cut to what the question needs (16-bit, no epilogue, C through descriptors), with
BLOCK_N2 extra columns or BLOCK_M2 extra rows; BLOCK_N2 = BLOCK_M2 = 0 is the library's kernel (its control rows).
Each shape: every candidate of the library's captured plan and every config here, timed once (graph replay over
operand copies rotated past the L2), then the best of each and torch.mm in 3 interleaved rounds.

    PYTHONPATH=. python3 notes/experiments/tile_192.py
"""
import os
import statistics
import sys

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.tools.tensor_descriptor import TensorDescriptor

from tritonmm import plan, timing
from tritonmm.kernels.tiles import tile_coords
from bench.common import copies
from bench.sweep import _operands


@triton.jit
def kernel(a_desc, a2_desc, b_desc, b2_desc, c_desc, c2_desc, M, N, K,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_M2: tl.constexpr,
           BLOCK_N2: tl.constexpr, ACC2_M: tl.constexpr, ACC2_N: tl.constexpr, GROUP_M: tl.constexpr,
           B_TRANS: tl.constexpr, NUM_SMS: tl.constexpr):
    TILE_M: tl.constexpr = BLOCK_M + BLOCK_M2
    TILE_N: tl.constexpr = BLOCK_N + BLOCK_N2
    num_pid_m = tl.cdiv(M, TILE_M)
    num_pid_n = tl.cdiv(N, TILE_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * TILE_M
        off_n = pid_n * TILE_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        acc2 = tl.zeros((ACC2_M, ACC2_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_m, off_k])
            b = b_desc.load([off_n, off_k]).T if B_TRANS else b_desc.load([off_k, off_n])
            acc = tl.dot(a, b, acc)
            if BLOCK_N2 > 0:
                b2 = b2_desc.load([off_n + BLOCK_N, off_k]).T if B_TRANS else b2_desc.load([off_k, off_n + BLOCK_N])
                acc2 = tl.dot(a, b2, acc2)
            if BLOCK_M2 > 0:
                acc2 = tl.dot(a2_desc.load([off_m + BLOCK_M, off_k]), b, acc2)
        left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
        c_desc.store([off_m, off_n], left.to(c_desc.dtype))
        c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))
        if BLOCK_N2 > 0:
            c_desc.store([off_m, off_n + BLOCK_N], acc2.to(c_desc.dtype))
        if BLOCK_M2 > 0:
            left2, right2 = acc2.reshape(BLOCK_M2, 2, BLOCK_N // 2).permute(0, 2, 1).split()
            c2_desc.store([off_m + BLOCK_M, off_n], left2.to(c2_desc.dtype))
            c2_desc.store([off_m + BLOCK_M, off_n + BLOCK_N // 2], right2.to(c2_desc.dtype))


# (BLOCK_M, BLOCK_M2, BLOCK_N, BLOCK_N2, BLOCK_K, stages, warps)
CONFIGS = [
    (128, 0, 128, 0, 64, 5, 4), (128, 0, 256, 0, 64, 4, 8),  # the library's tiles, as controls
    (128, 0, 128, 64, 64, 4, 8), (128, 0, 128, 64, 64, 5, 8), (128, 0, 128, 64, 64, 3, 8),
    (128, 64, 128, 0, 64, 4, 8),
    (64, 0, 128, 64, 64, 6, 4), (64, 0, 128, 64, 64, 4, 4),
]
SHAPES = [(1536, 1536, 1536, "NN"), (842, 3072, 3072, "NT"), (947, 3072, 8192, "NT"), (1672, 3072, 8192, "NT"),
          (601, 8192, 3072, "NT"), (2176, 2176, 2176, "NN"), (3072, 3072, 3072, "NN"), (944, 5216, 976, "NN"),
          (4096, 4096, 4096, "NN"), (3000, 3008, 3000, "NN")]
if os.environ.get("SHAPES"):
    SHAPES = [s for s in SHAPES if f"{s[0]}x{s[1]}x{s[2]}" in os.environ["SHAPES"].split(",")]


def cname(c):
    bm, bm2, bn, bn2, bk, s, w = c
    return f"{bm}{'+' + str(bm2) if bm2 else ''}x{bn}{'+' + str(bn2) if bn2 else ''}x{bk} w{w} s{s}"


def launcher(a, b, c, cfg, sms):
    """A call of the kernel for c = a @ b under cfg (b: row-major, or the transpose of a row-major W)."""
    bm, bm2, bn, bn2, bk, stages, warps = cfg
    b_trans = b.stride(0) == 1
    src = b.T if b_trans else b
    a_desc, a2_desc = TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(a, [max(bm2, 16), bk])
    blk = (lambda n: [n, bk]) if b_trans else (lambda n: [bk, n])
    b_desc, b2_desc = TensorDescriptor.from_tensor(src, blk(bn)), TensorDescriptor.from_tensor(src, blk(max(bn2, 16)))
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn // 2])
    c2_desc = TensorDescriptor.from_tensor(c, [max(bm2, 16), bn // 2])
    M, K = a.shape
    N = b.shape[1]
    tiles = triton.cdiv(M, bm + bm2) * triton.cdiv(N, bn + bn2)
    acc2 = (bm2, bn) if bm2 else (bm, bn2) if bn2 else (16, 16)
    grid = (min(tiles, sms),)
    return lambda: kernel[grid](a_desc, a2_desc, b_desc, b2_desc, c_desc, c2_desc, M, N, K, BLOCK_M=bm, BLOCK_N=bn,
                                BLOCK_K=bk, BLOCK_M2=bm2, BLOCK_N2=bn2, ACC2_M=acc2[0], ACC2_N=acc2[1], GROUP_M=8,
                                B_TRANS=b_trans, NUM_SMS=sms, num_warps=warps, num_stages=stages)


def lname(cfg):
    k = cfg.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages}" + \
        (" tail" if k.get("TAIL") else "")


def main():
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for M, N, K, layout in SHAPES:
        sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
        outs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in sets]
        ref = sets[0][0].float() @ sets[0][1].float()
        products = [plan.Product(a, b, c, "native", captured=True) for (a, b), c in zip(sets, outs)]
        lib = {}
        for cfg in products[0].candidates():
            try:
                products[0].run(cfg)
                lib[cfg] = timing.median_ms(lambda: [p.run(cfg) for p in products], rep_ms=25, graph=True) / len(sets)
            except Exception as e:
                print("  skip", lname(cfg), type(e).__name__, str(e)[:100], file=sys.stderr)
        exp, errs = {}, {}
        for cfg in CONFIGS:
            try:
                calls = [launcher(a, b, c, cfg, sms) for (a, b), c in zip(sets, outs)]
                outs[0].fill_(float("nan"))
                calls[0]()
                errs[cfg] = ((outs[0].float() - ref).norm() / ref.norm()).item()
                exp[cfg] = timing.median_ms(lambda: [f() for f in calls], rep_ms=25, graph=True) / len(sets)
            except Exception as e:
                print("  skip", cname(cfg), type(e).__name__, str(e)[:200], file=sys.stderr)
        best_lib = min(lib, key=lib.get)
        controls = [c for c in exp if not (c[1] or c[3])]
        wide = [c for c in exp if c[1] or c[3]]
        best_exp = min(wide, key=exp.get)
        exp_calls = [launcher(a, b, c, best_exp, sms) for (a, b), c in zip(sets, outs)]
        fns = {"torch": lambda: [torch.mm(a, b, out=c) for (a, b), c in zip(sets, outs)],
               "lib": lambda: [p.run(best_lib) for p in products],
               "wide": lambda: [f() for f in exp_calls]}
        t = {k: [] for k in fns}
        for _ in range(3):
            for k, fn in fns.items():
                t[k].append(timing.median_ms(fn, rep_ms=50, graph=True) / len(sets) * 1e3)
        us = {k: statistics.median(v) for k, v in t.items()}
        rows.append([f"{M}x{N}x{K} {layout}", f"{us['torch']:.2f}",
                     f"{lname(best_lib)}: {us['lib']:.2f} ({us['torch'] / us['lib']:.2f})",
                     f"{cname(best_exp)}: {us['wide']:.2f} ({us['torch'] / us['wide']:.2f})",
                     f"{max(errs.values()):.1e}",
                     " ".join(f"{cname(c)}={exp[c] * 1e3:.1f}" for c in exp)])
        print(rows[-1], flush=True)
        del products, sets, outs, exp_calls
    print(tabulate(rows, headers=["shape", "torch us", "library best (x torch)", "best 192 tile (x torch)",
                                  "max rel err", "each config here, us (once)"]))


if __name__ == "__main__":
    main()
