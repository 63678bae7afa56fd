"""The second pass of split-K: C = act(sum of the fp32 partial products + bias), in a fixed order.

Two kernels: split_k_reduce_kernel for the pointer kernel's split-K (every tile split), tail_reduce_kernel
for the TMA kernel's split tail (only the last wave's tiles split; below).

kernels/gemm.py with SPLIT_K > 1 leaves one (M, N) slab of fp32 partial sums per slice of K.
Each program here owns a BLOCK_M x BLOCK_N tile of C, adds the slabs in slice order (the
same order every call: results are deterministic, unlike atomic adds into C), applies the
epilogue (scales, bias, activation) the first pass skipped, and casts once. The workspace is contiguous (SPLIT_K, M, N).
"""
import triton
import triton.language as tl

from .tiles import epilogue, tile_coords


@triton.jit
def split_k_reduce_kernel(
    ws_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, stride_cm, stride_cn, stride_bias_m, stride_bias_n,
    SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
):
    offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    ws_ptrs = ws_ptr + offs_m[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        # s * M * N stays in int32: the planner splits only products of few tiles (plan.py).
        acc += tl.load(ws_ptrs + s * M * N, mask=mask, other=0.0)
    acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                   BIAS, ACTIVATION, SCALE_A, SCALE_B)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def tail_reduce_kernel(
    ws_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, stride_cm, stride_cn, stride_bias_m, stride_bias_n,
    whole, split,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr, ROWS: tl.constexpr, SLICES: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
):
    # The second pass of the TMA kernel's split tail (gemm_tma.py, SPLIT_TAIL): tile ``whole`` + t of C is
    # the sum of the workspace's BLOCK_M x BLOCK_N tiles t * split to t * split + split - 1, in that order. A
    # program adds ROWS rows of one tile (program_id(0): t) and stores them where tile_coords puts the tile.
    # The slices are unrolled (SLICES: at least split; those past it masked off), so every slice's load is in
    # flight at once: one slice at a time (a loop over split), 48 programs took 7.7 us at 1536^3, and one 3-D
    # load of every slice summed by tl.sum 19 us (session 18, runs 3-4).
    t = tl.program_id(0)
    pid_m, pid_n = tile_coords(whole + t, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rows = tl.program_id(1) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    ws_ptrs = ws_ptr + t * split * (BLOCK_M * BLOCK_N) + rows[:, None] * BLOCK_N + cols[None, :]
    acc = tl.zeros((ROWS, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SLICES):
        acc += tl.load(ws_ptrs + s * (BLOCK_M * BLOCK_N), mask=s < split, other=0.0)
    offs_m = pid_m * BLOCK_M + rows
    offs_n = pid_n * BLOCK_N + cols
    acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                   BIAS, ACTIVATION, SCALE_A, SCALE_B)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :].to(tl.int64) * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask)
