"""Experiment (session 27, runs 1-2): reading a weight whose rows are not 16-byte aligned through TMA, unstaged.

77x4099x2049 x @ W.T (bf16) is the sweep's one unaligned product under the issue's 2x: 1.13x torch.mm (session 26).
Its 16.8 MB weight has rows 4098 bytes apart, which TMA cannot read, so the planner copies it into aligned rows
(read and write: ~14 us, session 17) and the product then reads the copy (~8 us): 23.4 us against cuBLAS's 26.4.
Reading the weight once from HBM would take 6.1 us (2.75 TB/s).

The idea: W's rows fall into P = 8 / gcd(ldw, 8) classes by their index mod P. The rows of one class are P * ldw
elements apart, a multiple of 16 bytes; row r of the first group starts r * ldw elements in, which is 16-byte
aligned once moved on by delta_r = r * e elements (e = S - ldw, S the multiple of 8 at or above ldw). So one 3-D
descriptor, shape [P, ceil(N / P), K - D], strides [S, P * ldw, 1] (D = (P - 1) * e), reads W[P q + r, delta_r + j]
at [r, q, j]: every box 16-byte aligned, every row of it inside W's row. Its columns [0, delta_r) and
[delta_r + K - D, K), D of them a row, are read by pointers once a tile (one small dot). x, small, is staged as P
copies shifted alike, X[r, m, j] = x[m, delta_r + j]; a program owns rows of one class, so its output columns are
P apart (stored through pointers). The last tile of each class moves back to end at the class's last row, so no
box reaches past W (tiles of BLOCK_N rows need N / P >= BLOCK_N).

Hypothesis: 77x4099x2049 runs in 10-12 us with x's copies (2x+ torch.mm), and products of few rows against
unaligned weights generally gain over staging; staging keeps the lead where the weight is read many times.

**Wrong** (H100, torch 2.11, Triton 3.6; notes/runs/s27/): in run 1 the best config ran 77x4099x2049 in 27.4 us
(kernel 23.0, x's copies 4.9) against 23.7 staged and 26.8 for cuBLAS; of five other shapes it lost on three, tied
at 48x4100x2050 and led only at 106x645x4340 (P = 2: 1.05x cuBLAS where tritonmm ran 0.72x). Run 2
(ANATOMY=1, the kernel alone, 64x64x128 s5, us): as is 23.3; without the pointer-read columns 19.4; on a copy of W
whose rows are 128-byte aligned, read in 8 classes all the same, 19.5, and as plain rows (P = 1) 13.5; 16-byte
aligned rows 22.9 in classes, 16.7 as plain rows. Over its three configs, rows 8 apart in a box cost 22-44%, rows
only 16-byte aligned another 2-23%, and the pointer-read columns 2-4 us: the boxes of one class read slower than the
copy they replace.

Per shape (bf16, x @ W.T, the sweep's operands rotated past the L2, graph replay, read-flushed, us per product):
torch.mm, tritonmm as shipped, the best config of this kernel with and without x's copies, interleaved rounds;
every result checked against float64.

    PYTHONPATH=. python3 notes/experiments/residue_classes.py [MxNxK ...]
    ANATOMY=1 PYTHONPATH=. python3 notes/experiments/residue_classes.py
"""
import math
import os
import statistics
import sys

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.tools.tensor_descriptor import TensorDescriptor

import tritonmm
from bench.common import copies, device_ms, interleaved_times, rel_err
from bench.sweep import _graph, _operands

SHAPES = [(77, 4099, 2049), (48, 4100, 2050), (141, 3073, 8191), (300, 5121, 5121), (106, 645, 4340),
          (512, 4099, 2049)]
CONFIGS = [(BM, BN, BK, s, 4) for BM in (64, 128) for BN in (32, 64, 128) for BK in (64, 128) for s in (3, 5)]
ROUNDS = 3


@triton.jit
def classes_kernel(x_desc, w_desc, x_ptr, w_ptr, c_ptr, M, N, K_IN, E, stride_xm, stride_wn, stride_cm, stride_cn,
                   P: tl.constexpr, D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, UPCAST: tl.constexpr, CORRECT: tl.constexpr = True):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    r = pid % P  # classes innermost: programs that run together read the same x tile
    pid_m = (pid // P) % num_pid_m
    pid_q = pid // P // num_pid_m
    rows_r = (N - r + P - 1) // P  # W's rows in class r
    first_q, first_m = pid_q * BLOCK_N, pid_m * BLOCK_M
    off_q = tl.minimum(first_q, rows_r - BLOCK_N)  # the last tile ends at the class's last row
    off_m = tl.minimum(first_m, tl.maximum(M - BLOCK_M, 0))
    offs_m = off_m + tl.arange(0, BLOCK_M)
    offs_q = off_q + tl.arange(0, BLOCK_N)
    offs_n = r + P * offs_q
    # The D columns a row the boxes leave out: [0, delta) and [delta + K_IN, K), read first (their latency
    # under the pipeline's fill).
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    if CORRECT:  # off: timing only (run 2), the result then lacks those columns
        d = tl.arange(0, BLOCK_D)
        delta = r * E
        col = tl.where(d < delta, d, K_IN + d).to(tl.int64)
        xc = tl.load(x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + col[None, :],
                     mask=(offs_m[:, None] < M) & (d[None, :] < D), other=0.0)
        wc = tl.load(w_ptr + offs_n[:, None].to(tl.int64) * stride_wn + col[None, :],
                     mask=(offs_n[:, None] < N) & (d[None, :] < D), other=0.0)
        if UPCAST:
            xc, wc = xc.to(tl.float32), wc.to(tl.float32)
        acc = tl.dot(xc, wc.T, acc)
    for ki in range(tl.cdiv(K_IN, BLOCK_K)):
        a = x_desc.load([r, off_m, ki * BLOCK_K]).reshape(BLOCK_M, BLOCK_K)
        b = w_desc.load([r, off_q, ki * BLOCK_K]).reshape(BLOCK_N, BLOCK_K)
        if UPCAST:
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b.T, acc)
    mask = (offs_m[:, None] >= first_m) & (offs_m[:, None] < M) & (offs_q[None, :] >= first_q) & \
        (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :].to(tl.int64) * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask)


def classes(ldw: int, P: int = 0):
    """(P, e, D) for a weight whose rows are ldw 2-byte elements apart. A P given (run 2: aligned rows read in
    classes all the same, e = 0) overrides the one ldw needs."""
    e = -ldw % 8
    P = P or 8 // math.gcd(ldw, 8)
    return P, e, (P - 1) * e


class Classes:
    """x @ W.T for a weight W (N, K) with unit column stride, through classes_kernel: x's shifted copies (xs), the
    descriptors, and the launch."""

    def __init__(self, x, w, out, cfg, P=0, correct=True):
        (M, K), (N, _) = x.shape, w.shape
        ldw = w.stride(0)
        assert w.stride(1) == 1 and x.stride(1) == 1 and w.data_ptr() % 16 == 0
        P, e, D = classes(ldw, P)
        BM, BN, BK, stages, warps = cfg
        assert N // P >= BN, "a class has fewer rows than a tile"
        self.k_in = K - D
        kx = -(-self.k_in // 8) * 8
        self.xs = torch.empty(P, M, kx, dtype=x.dtype, device=x.device)
        self.src = x.as_strided((P, M, self.k_in), (e, x.stride(0), 1))
        xd = TensorDescriptor(self.xs, [P, M, self.k_in], [M * kx, kx, 1], [1, BM, BK])
        wd = TensorDescriptor(w, [P, -(-N // P), self.k_in], [ldw + e, P * ldw, 1], [1, BN, BK])
        grid = (P * triton.cdiv(M, BM) * triton.cdiv(-(-N // P), BN),)
        self.x, self.w, self.out = x, w, out
        self.args = (xd, wd, x, w, out, M, N, self.k_in, e, x.stride(0), ldw, *out.stride())
        self.meta = dict(P=P, D=D, BLOCK_D=max(16, triton.next_power_of_2(max(D, 1))), BLOCK_M=BM, BLOCK_N=BN,
                         BLOCK_K=BK, UPCAST=x.device.type == "cpu", CORRECT=correct, num_stages=stages,
                         num_warps=warps)
        self.grid = grid

    def stage(self):
        self.xs[:, :, :self.k_in].copy_(self.src)

    def kernel(self):
        classes_kernel[self.grid](*self.args, **self.meta)

    def __call__(self):
        self.stage()
        self.kernel()


def operands(M, N, K):
    """The sweep's x @ W.T operand copies (bf16, rotated past the L2), their count, out, and the last copy's float64
    product."""
    sets = [_operands(M, N, K, "NT", torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    return sets, len(sets), out, sets[-1][0].double() @ sets[-1][1].double()


def anatomy(M, N, K):
    """Run 2: the kernel alone (x's copies made once, outside the timing) on variants that take one difference away
    at a time: the pointer-read columns (no correction), the weight's alignment (its rows copied once into rows
    of ldw' elements: 128-, 32- and 16-byte aligned), and the classes (P = 1: plain 2-D rows)."""
    sets, n, out, ref = operands(M, N, K)
    padded = {}
    for ld in (2112, 2064, 2056):
        padded[ld] = []
        for _, b in sets:
            buf = torch.empty(N, ld, dtype=b.dtype, device=b.device)[:, :K]
            buf.copy_(b.T)
            padded[ld].append(buf)
    variants = [("as is", None, 0, True), ("no pointer columns (wrong)", None, 0, False),
                ("rows 128B-aligned, P=8", 2112, 8, True), ("rows 32B-aligned, P=8", 2064, 8, True),
                ("rows 16B-aligned, P=8", 2056, 8, True), ("rows 128B-aligned, P=1", 2112, 1, True),
                ("rows 16B-aligned, P=1", 2056, 1, True)]
    table = []
    for cfg in ((64, 64, 128, 5, 4), (128, 64, 64, 5, 4), (64, 32, 128, 5, 4)):
        row = [str(cfg)]
        for name, ld, P, correct in variants:
            ws = [b.T for _, b in sets] if ld is None else padded[ld]
            runs = [Classes(a, w, out, cfg, P=P, correct=correct) for (a, _), w in zip(sets, ws)]
            for r in runs:
                r.stage()
            out.fill_(float("nan"))
            g = _graph(lambda i: runs[i].kernel(), [(i,) for i in range(n)])
            g.replay()
            torch.cuda.synchronize()
            err = rel_err(out, ref)
            ms = device_ms(g.replay) / n
            print(f"  {cfg} {name}: {ms * 1e3:.2f} us, rel err {err:.1e}, grid {runs[0].grid[0]}", flush=True)
            row.append(f"{ms * 1e3:.2f}")
        table.append(row)
    print(tabulate(table, headers=[f"{M}x{N}x{K} kernel, us"] + [v[0] for v in variants], disable_numparse=True))


def main():
    if os.environ.get("ANATOMY"):
        return anatomy(77, 4099, 2049)
    shapes = [tuple(map(int, a.split("x"))) for a in sys.argv[1:]] or SHAPES
    table = []
    for M, N, K in shapes:
        sets, n, out, ref = operands(M, N, K)
        P, _, D = classes(sets[0][1].T.stride(0))
        torch_g = _graph(lambda a, b: torch.mm(a, b, out=out), sets)
        tritonmm.matmul(*sets[0], out=out)  # tunes outside the capture
        ours_g = _graph(lambda a, b: tritonmm.matmul(a, b, out=out), sets)
        best, best_ms, keep, errs = None, float("inf"), [], []
        for cfg in CONFIGS:
            if N // P < cfg[1] or (cfg[0] == 128 and M <= 64):
                continue
            try:
                runs = [Classes(a, b.T, out, cfg) for a, b in sets]
                runs[0]()
            except Exception as exc:  # noqa: BLE001 (a config the compiler refuses)
                print(f"  {cfg}: {type(exc).__name__}: {str(exc)[:120]}", flush=True)
                continue
            keep.append(runs)
            out.fill_(float("nan"))
            g = _graph(lambda i: runs[i](), [(i,) for i in range(n)])
            g.replay()
            torch.cuda.synchronize()
            errs.append(rel_err(out, ref))
            ms = device_ms(g.replay) / n
            print(f"  {cfg}: {ms * 1e3:.2f} us, rel err {errs[-1]:.2e}", flush=True)
            if ms < best_ms:
                best, best_ms, best_runs = cfg, ms, runs
        full = _graph(lambda i: best_runs[i](), [(i,) for i in range(n)])
        kern = _graph(lambda i: best_runs[i].kernel(), [(i,) for i in range(n)])
        stage = _graph(lambda i: best_runs[i].stage(), [(i,) for i in range(n)])
        fns = {"torch": torch_g.replay, "tritonmm": ours_g.replay, "classes": full.replay, "kernel": kern.replay,
               "x copies": stage.replay}
        med = {k: statistics.median(v) / n * 1e3 for k, v in interleaved_times(fns, ROUNDS).items()}  # us a product
        ours_g.replay()
        torch.cuda.synchronize()
        table.append([f"{M}x{N}x{K}", P, D, n, f"{med['torch']:.2f}", f"{med['tritonmm']:.2f}",
                      f"{med['torch'] / med['tritonmm']:.2f}", str(best), f"{med['classes']:.2f}",
                      f"{med['torch'] / med['classes']:.2f}", f"{med['kernel']:.2f}", f"{med['x copies']:.2f}",
                      f"{max(errs):.1e}", f"{rel_err(out, ref):.1e}"])
        print(table[-1], flush=True)
        del keep, sets, best_runs
    print(tabulate(table, headers=["x @ W.T", "P", "D", "copies", "torch.mm", "tritonmm", "x", "best (BM,BN,BK,s,w)",
                                   "classes", "x", "kernel", "x copies", "max err", "tritonmm err"],
                   disable_numparse=True))


if __name__ == "__main__":
    main()
