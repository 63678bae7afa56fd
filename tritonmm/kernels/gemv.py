"""The row kernel (GEMV): C[z, m, :] = A[z, m, :] @ B[z] (scaled, + bias, activation), any strides; BLOCK_M rows of
C a program (1, 2, 4 or 8).

A decode product (x @ W.T with one row of x) reads each weight element once and does one
multiply-add with it: no reuse for a tile to exploit, and a 64-row tensor-core tile would be
63/64 padding. Its speed is how fast the weight streams from HBM. Here each program owns
BLOCK_N columns of C (BLOCK_N rows of W) and walks K in BLOCK_K chunks on the FMA units,
keeping a BLOCK_N x BLOCK_K fp32 partial sum in registers and reducing it once at the end.
With a few KB of registers a program and no shared-memory pipeline, many programs fit on
an SM at once, and their loads in flight are what keeps HBM busy. A weight row-major in K
(x @ W.T) is read in long contiguous runs; any other strides work too, masked at the edges.

A program of BLOCK_M > 1 rows reads each tile of W once for all of them (a BLOCK_M x BLOCK_N x BLOCK_K partial sum):
IEEE float32 products of a few rows, which tl.dot's FMA path runs well below SGEMM (design.md: ieee-rows).
The grid is (batch * column blocks * row blocks,), rows fastest: the rows of A that share a block of
B run together, so B's tiles come from L2 after the first.
float32 products are fp32 multiply-adds whatever precision is asked: as exact as IEEE, more than TF32.
"""
import triton
import triton.language as tl

from .tiles import epilogue, let_next_kernel_start, wait_for_previous_kernel


@triton.jit
def gemv_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
    stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn, stride_cz, stride_cm, stride_cn,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr, PDL: tl.constexpr,
):
    wait_for_previous_kernel(PDL)
    pid = tl.program_id(0)
    blocks, row_blocks = tl.cdiv(N, BLOCK_N), tl.cdiv(M, BLOCK_M)
    m = (pid % row_blocks).to(tl.int64) * BLOCK_M  # the program's first row
    pid_n = (pid // row_blocks) % blocks
    z = (pid // row_blocks // blocks).to(tl.int64)
    offs_m = m + tl.arange(0, BLOCK_M)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    # One row loads A's row as a vector that broadcasts over W's tile (as a (1, BLOCK_K) tile, one-row products of K
    # a multiple of 8 but not 16 ran up to 1.2x slower); more rows keep a partial sum each, over one load of W's tile.
    if BLOCK_M == 1:
        a_ptrs = a_ptr + z * stride_az + m * stride_am + offs_k * stride_ak
        acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    else:
        a_ptrs = a_ptr + z * stride_az + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
        acc = tl.zeros((BLOCK_M, BLOCK_N, BLOCK_K), dtype=tl.float32)
    b_ptrs = b_ptr + z * stride_bz + offs_n[:, None] * stride_bn + offs_k[None, :] * stride_bk
    step_a = BLOCK_K * tl.cast(stride_ak, tl.int64)
    step_b = BLOCK_K * tl.cast(stride_bk, tl.int64)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        # K's mask keeps 16-byte loads where K is a multiple of 16 (Triton specializes K on it).
        k_left = K - k * BLOCK_K
        if BLOCK_M == 1:
            x = tl.load(a_ptrs, mask=offs_k < k_left, other=0.0)
        else:
            x = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        w = tl.load(b_ptrs, mask=(offs_n[:, None] < N) & (offs_k[None, :] < k_left), other=0.0)
        if BLOCK_M == 1:
            acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
        else:
            acc += w.to(tl.float32)[None, :, :] * x.to(tl.float32)[:, None, :]
        a_ptrs += step_a
        b_ptrs += step_b
    let_next_kernel_start(PDL)
    if BLOCK_M == 1:
        sums = tl.sum(acc, axis=1)[None, :]
    else:
        sums = tl.sum(acc, axis=2)
    y = epilogue(sums, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N,
                 stride_bias_m, stride_bias_n, BIAS, ACTIVATION, SCALE_A, SCALE_B)
    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
