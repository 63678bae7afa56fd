"""The pointer block program: C[z] = A[z] @ B[z] (+ bias, activation), any strides.

One program owns one BLOCK_M x BLOCK_N tile of one product of the batch and walks K in
BLOCK_K steps. It reads through plain pointers, so it takes any strides (transposed and
sliced views, a batch stride of 0 for a broadcast operand) and any alignment; rows and
columns past the edge are wrapped onto valid ones, so the main loop's loads carry no mask
at all, and only the last, partial K step is masked. The store drops the wrapped lanes.
"""
import triton
import triton.language as tl

from .tiles import epilogue, tile_coords


@triton.jit
def _dot(a, b, acc, INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    if UPCAST:  # Triton's CPU interpreter multiplies bf16 bit patterns (triton#11584)
        a, b = a.to(tl.float32), b.to(tl.float32)
    return tl.dot(a, b, acc, input_precision=INPUT_PRECISION)


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K,
    stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn, stride_cz, stride_cm, stride_cn,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr,
):
    # The grid is (batch * tiles,): one axis has room for 2**31 programs, so no batch is too large.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles = num_pid_m * num_pid_n
    z = (tl.program_id(0) // tiles).to(tl.int64)
    pid_m, pid_n = tile_coords(tl.program_id(0) % tiles, num_pid_m, num_pid_n, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # int64 offsets: M * stride can pass 2**31 elements on large tensors.
    rows = (offs_m % M).to(tl.int64)
    cols = (offs_n % N).to(tl.int64)
    a_ptrs = a_ptr + z * stride_az + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + z * stride_bz + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K // BLOCK_K):
        acc = _dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, INPUT_PRECISION, UPCAST)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    k_left = K % BLOCK_K
    if k_left:  # masked lanes read 0, which adds nothing to the dot product
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = _dot(a, b, acc, INPUT_PRECISION, UPCAST)

    acc = epilogue(acc, bias_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n, BIAS, ACTIVATION)
    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
