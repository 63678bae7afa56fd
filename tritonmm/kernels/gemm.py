"""The pointer block program: C[z] = A[z] @ B[z] (scaled, + bias, activation), any strides.

One program owns one BLOCK_M x BLOCK_N tile of one product of the batch and walks K in
BLOCK_K steps. It reads through plain pointers and masks, so it takes any strides
(transposed and sliced views, a batch stride of 0 for a broadcast operand) and any
alignment; edge tiles are masked, nothing is padded.

Split-K (SPLIT_K > 1, unbatched products only): SPLIT_K programs share each tile, each walking
one contiguous slice of the K steps, and store their fp32 partial sums in C[split] of an
(SPLIT_K, M, N) workspace, without the epilogue; kernels/split_k.py adds the slices in a fixed
order and applies it. For products with too few tiles to occupy every SM (decode: M of 1-64).

Alignment hints (VEC_*, DIV_*): Triton specializes an integer argument as divisible by 16 or not
at all, so rows that start 4 or 8 bytes apart (a bf16 row of 5938 elements) would be read 2 bytes
at a time, and only 4-, 8- and 16-byte reads can be asynchronous copies, which the compiler
pipelines over the K steps. The launcher passes what it knows instead (layout.alignment): VEC_A,
VEC_B and VEC_C elements divide every stride of that tensor but a unit one; DIV_M, DIV_N and DIV_K
divide the sizes, which bound the masks along the rows. Only where Triton's specialization does not
already say as much (VEC 0, DIV 1: no hint): a hint replaces what the compiler inferred. The claims
sit on the 1-D offset terms (offs * stride) before they are broadcast: true in either orientation (a
unit-stride term starts each run at a multiple of its block), and Triton carries a term's divisibility
onto the dim that broadcasting adds; [VEC, 1] claims on the broadcast terms compiled no asynchronous copy
(design.md: alignment-hints).
"""
import triton
import triton.language as tl

from .tiles import epilogue, let_next_kernel_start, tile_coords, wait_for_previous_kernel


@triton.jit
def gemm_kernel(
    a_ptr, b_ptr, c_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
    stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn, stride_cz, stride_cm, stride_cn,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, SPLIT_K: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_C: tl.constexpr,
    DIV_M: tl.constexpr, DIV_N: tl.constexpr, DIV_K: tl.constexpr, PDL: tl.constexpr,
):
    wait_for_previous_kernel(PDL)
    # The grid is (batch * tiles * SPLIT_K,): one axis has room for 2**31 programs, so no batch
    # is too large. The slices of one tile are neighbours, so they run in the same wave.
    if DIV_M > 1:  # the same sizes, known divisible (module docstring)
        M = M // DIV_M * DIV_M
    if DIV_N > 1:
        N = N // DIV_N * DIV_N
    if DIV_K > 1:
        K = K // DIV_K * DIV_K
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
    a_z, a_m, a_k = z * stride_az, offs_m * stride_am, offs_k * stride_ak
    b_z, b_k, b_n = z * stride_bz, offs_k * stride_bk, offs_n * stride_bn
    if VEC_A > 0:  # the alignment hints (module docstring); 0: Triton's own specialization tells it all
        a_z, a_m, a_k = tl.multiple_of(a_z, VEC_A), tl.multiple_of(a_m, VEC_A), tl.multiple_of(a_k, VEC_A)
    if VEC_B > 0:
        b_z, b_k, b_n = tl.multiple_of(b_z, VEC_B), tl.multiple_of(b_k, VEC_B), tl.multiple_of(b_n, VEC_B)
    a_ptrs = a_ptr + a_z + a_m[:, None] + a_k[None, :] + first * step_a
    b_ptrs = b_ptr + b_z + b_k[:, None] + b_n[None, :] + first * step_b

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(first, last):
        # Masked lanes read 0, which adds nothing to the dot product: edge tiles need no padding.
        # Masking every step measured faster than wrapping edge rows onto valid ones and masking
        # only the last K step (design.md: pointer-masks).
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:  # Triton's CPU interpreter multiplies bf16 bit patterns (triton#11584); numpy has no fp8
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += step_a
        b_ptrs += step_b
    let_next_kernel_start(PDL)

    if SPLIT_K > 1:
        z = split.to(tl.int64)  # this slice's partial sums, in the workspace; no epilogue yet
    else:
        acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                       BIAS, ACTIVATION, SCALE_A, SCALE_B)
    c_z, c_m, c_n = z * stride_cz, offs_m * stride_cm, offs_n * stride_cn
    if VEC_C > 0:
        c_z, c_m, c_n = tl.multiple_of(c_z, VEC_C), tl.multiple_of(c_m, VEC_C), tl.multiple_of(c_n, VEC_C)
    c_ptrs = c_ptr + c_z + c_m[:, None] + c_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
