"""The second pass of split-K: C = act(sum of the fp32 partial products + bias), in a fixed order.

kernels/gemm.py with SPLIT_K > 1 leaves one (M, N) slab of fp32 partial sums per slice of K.
Each program here owns a BLOCK_M x BLOCK_N tile of C, adds the slabs in slice order (the
same order every call: results are deterministic, unlike atomic adds into C), applies the
epilogue (scales, bias, activation) the first pass skipped, and casts once. The workspace is contiguous (SPLIT_K, M, N).
"""
import triton
import triton.language as tl

from .tiles import epilogue, let_next_kernel_start, wait_for_previous_kernel


@triton.jit
def split_k_reduce_kernel(
    ws_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, stride_cm, stride_cn, stride_bias_m, stride_bias_n,
    SPLIT_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr, PDL: tl.constexpr,
):
    wait_for_previous_kernel(PDL)
    offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    ws_ptrs = ws_ptr + offs_m[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        # s * M * N stays in int32: the planner splits only products of few tiles (product.py).
        acc += tl.load(ws_ptrs + s * M * N, mask=mask, other=0.0)
    let_next_kernel_start(PDL)
    acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                   BIAS, ACTIVATION, SCALE_A, SCALE_B)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask)
