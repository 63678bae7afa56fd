# The pointer kernel as it was before session 12's alignment hints (tritonmm/kernels/gemm.py at e9df7cf),
# kept as hint_ab.py's baseline: the device's copy of the tree has no git history to take it from.
"""The pointer block program: C[z] = A[z] @ B[z] (scaled, + bias, activation), any strides.

One program owns one BLOCK_M x BLOCK_N tile of one product of the batch and walks K in
BLOCK_K steps. It reads through plain pointers and masks, so it takes any strides
(transposed and sliced views, a batch stride of 0 for a broadcast operand) and any
alignment; edge tiles are masked, nothing is padded.

Split-K (SPLIT_K > 1, unbatched products only): SPLIT_K programs share each tile, each walking
one contiguous slice of the K steps, and store their fp32 partial sums in C[split] of an
(SPLIT_K, M, N) workspace, without the epilogue; kernels/split_k.py adds the slices in a fixed
order and applies it. For products with too few tiles to occupy every SM (decode: M of 1-64).
"""
import triton
import triton.language as tl

from tritonmm.kernels.tiles import epilogue, tile_coords


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
    stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn, stride_cz, stride_cm, stride_cn,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, SPLIT_K: tl.constexpr,
):
    # The grid is (batch * tiles * SPLIT_K,): one axis has room for 2**31 programs, so no batch
    # is too large. The slices of one tile are neighbours, so they run in the same wave.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles = num_pid_m * num_pid_n
    pid = tl.program_id(0) // SPLIT_K
    split = tl.program_id(0) % SPLIT_K
    z = (pid // tiles).to(tl.int64)
    pid_m, pid_n = tile_coords(pid % tiles, num_pid_m, num_pid_n, GROUP_M)
    k_steps = tl.cdiv(K, BLOCK_K)
    steps = tl.cdiv(k_steps, SPLIT_K)  # this program's slice: K steps [first, last)
    first = split * steps
    last = tl.minimum(first + steps, k_steps)
    # int64 offsets: M * stride can pass 2**31 elements on large tensors, and so can BLOCK_K
    # steps of a large K stride (a column-major A or a row-major B of 2**25 columns).
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    step_a = BLOCK_K * tl.cast(stride_ak, tl.int64)
    step_b = BLOCK_K * tl.cast(stride_bk, tl.int64)
    a_ptrs = a_ptr + z * stride_az + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak + first * step_a
    b_ptrs = b_ptr + z * stride_bz + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn + first * step_b

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(first, last):
        # Masked lanes read 0, which adds nothing to the dot product: edge tiles need no padding.
        # Masking every step measured faster than wrapping edge rows onto valid ones and masking
        # only the last K step: 1.0-6x on unaligned and x @ W.T shapes, and within 5% on aligned
        # squares (notes/experiments/pointer_ab.py, session 3).
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:  # Triton's CPU interpreter multiplies bf16 bit patterns (triton#11584); numpy has no fp8
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += step_a
        b_ptrs += step_b

    if SPLIT_K > 1:
        z = split.to(tl.int64)  # this slice's partial sums, in the workspace; no epilogue yet
    else:
        acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                       BIAS, ACTIVATION, SCALE_A, SCALE_B)
    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
