"""Experiment (session 10): the staging copies of unaligned products, before and after vectorizing.

Session 9 (run 4) found a staged product's copies at 40-45% of its call (4095x4097x1531: 49 us for A
and B, 44 for C, 0.5-1.5 TB/s). Compiled for sm_90 on the CPU machine, copy_kernel moved every
element with its own 2-byte load and store, on both sides: its mask c < C varies along the rows
when C is not a multiple of 16, and the staged buffers' row stride (a multiple of 8 elements) is
not known to be one of 16. Copies timed here, in CUDA-graph replay, sources rotated past the L2:

- old: session 9's copy_kernel (masked everywhere) into rows padded to 8 elements;
- new: copy_kernel as now (inner tiles unmasked) into rows padded to 16 elements (the aligned side
  moves 16 bytes an access);
- funnel: an unaligned source read as 8-byte words, each output word shifted together from two
  (4 elements an access instead of 1), into rows padded to 16 elements;
- torch: y.copy_(x) into the padded rows.

Predicted: new 1.5-2x old where one side is aligned; funnel another 1.5x on unaligned sources.

    PYTHONPATH=. python3 notes/experiments/copy_rates.py
"""
import math

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.testing import do_bench

from tritonmm.kernels.copy import copy_kernel


@triton.jit
def old_copy_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc, stride_yr, stride_yc, BLOCK: tl.constexpr):
    r = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    c = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = (r[:, None] < R) & (c[None, :] < C)
    tile = tl.load(x_ptr + r[:, None] * stride_xr + c[None, :] * stride_xc, mask=mask)
    tl.store(y_ptr + r[:, None] * stride_yr + c[None, :] * stride_yc, tile, mask=mask)


@triton.jit
def funnel_kernel(xw_ptr, yw_ptr, e0, R, C, stride_xr, stride_yw2, P: tl.constexpr,
                  BLOCK_R: tl.constexpr, BLOCK_W: tl.constexpr):
    # Rows of x (contiguous, any alignment) as 8-byte words of P elements from an aligned base;
    # output word j of row r = the P elements from flat element f + j * P, shifted out of two words.
    r = (tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)
    j = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)
    f = e0 + r * stride_xr
    w = f // P
    sh = ((f % P) * (64 // P)).to(tl.uint64)[:, None]
    last = ((f + C - 1) // P)[:, None]
    wi = w[:, None] + j[None, :]
    rows = (r < R)[:, None]
    lo = tl.load(xw_ptr + wi, mask=rows & (wi <= last), other=0)
    hi = tl.load(xw_ptr + wi + 1, mask=rows & (wi + 1 <= last), other=0)
    out = tl.where(sh == 0, lo, (lo >> sh) | (hi << (64 - sh)))
    y_offs = r[:, None] * (stride_yw2 * 2) + j[None, :]  # * 2: rows 16 bytes apart, known to the compiler
    if (tl.program_id(0) + 1) * BLOCK_R <= R and (tl.program_id(1) + 1) * BLOCK_W * P <= C:
        tl.store(yw_ptr + y_offs, out)
    else:
        tl.store(yw_ptr + y_offs, out, mask=rows & (j[None, :] * P < C))


def padded(rows, cols, like, per):
    return torch.empty((rows, triton.cdiv(cols, per) * per), dtype=like.dtype, device=like.device)[:, :cols]


def old(x, y):
    R, C = x.shape
    old_copy_kernel[(triton.cdiv(R, 64), triton.cdiv(C, 64))](x, y, R, C, *x.stride(), *y.stride(), BLOCK=64)


def new(x, y):
    R, C = x.shape
    # a 2-D grid in run 1; the pair arguments since session 11 (unread without PAIR)
    copy_kernel[(triton.cdiv(R, 64) * triton.cdiv(C, 64),)](x, y, None, x, y, R, C, *x.stride(), *y.stride(),
                                                            0, 0, 0, 0, 0, 0, BLOCK=64, SPLIT_TF32=False, PAIR=False)


def funnel(x, y):
    R, C = x.shape
    E = x.element_size()
    P = 8 // E
    byte_off = x.storage_offset() * E
    storage = x.untyped_storage()
    xw = torch.empty(0, dtype=torch.uint64, device=x.device).set_(storage, byte_off // 8, (storage.nbytes() // 8 - byte_off // 8,), (1,))
    yw = y.view(torch.uint64) if False else torch.empty(0, dtype=torch.uint64, device=y.device).set_(
        y.untyped_storage(), y.storage_offset() * E // 8, (y.untyped_storage().nbytes() // 8,), (1,))
    ld = y.stride(0)
    assert ld % (2 * P) == 0
    funnel_kernel[(triton.cdiv(R, 32), triton.cdiv(triton.cdiv(C, P), 64))](
        xw, yw, (byte_off % 8) // E, R, C, x.stride(0), ld // P // 2, P=P, BLOCK_R=32, BLOCK_W=64)


def torch_copy(x, y):
    y.copy_(x)


L2 = torch.cuda.get_device_properties(0).L2_cache_size


def graph_us(call, n):
    for i in range(n):
        call(i)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(n):
            call(i)
    return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n


rows = []
cases = [("A 4095x1531", 4095, 1531, "in"), ("B 1531x4097", 1531, 4097, "in"), ("C 4095x4097", 4095, 4097, "out"),
         ("A 1023x1027", 1023, 1027, "in"), ("B 1027x1025", 1027, 1025, "in"), ("C 1023x1025", 1023, 1025, "out"),
         ("A 77x2049", 77, 2049, "in"), ("W 4099x2049", 4099, 2049, "in")]
for name, R, C, way in cases:
    n = max(2, min(8, math.ceil(3 * L2 / (R * C * 2))))
    # "in": the caller's unaligned rows into aligned ones; "out": C from an aligned buffer into the caller's.
    user = [torch.randn(R, C, device="cuda").bfloat16() for _ in range(n)]
    bufs = {per: [padded(R, C, user[0], per) for _ in range(n)] for per in (8, 16)}
    if way == "out":
        for per in bufs:
            for b, u in zip(bufs[per], user):
                b.copy_(u)
    res = {}
    impls = {"old": (old, 8), "new": (new, 16), "torch": (torch_copy, 16)}
    if way == "in":
        impls["funnel"] = (funnel, 16)
    for impl, (fn, per) in impls.items():
        src, dst = (user, bufs[per]) if way == "in" else (bufs[per], [torch.empty_like(u) for u in user])
        fn(src[0], dst[0])
        torch.cuda.synchronize()
        ok = torch.equal(dst[0], src[0])
        res[impl] = (graph_us(lambda i: fn(src[i], dst[i]), n), ok)
    moved = 2 * R * C * 2
    row = [name, way] + [f"{res[k][0]:.1f} ({moved / res[k][0] / 1e6:.2f}){'' if res[k][1] else ' WRONG'}" if k in res else ""
                         for k in ("old", "new", "funnel", "torch")]
    rows.append(row)
    print(*row, flush=True)
    del user, bufs
print(tabulate(rows, headers=["copy", "way", "old us (TB/s)", "new us", "funnel us", "torch us"], disable_numparse=True))
