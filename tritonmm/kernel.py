"""The block programs: C = A @ B, one BLOCK_M x BLOCK_N tile of C per program step.

Both kernels are the same tiled algorithm. A program owns a tile of C, walks K in
BLOCK_K steps, loads one tile of A and one of B per step and accumulates their product
in fp32 with ``tl.dot``; the compiler stages the tiles through shared memory, inserts
the barriers, pipelines ``num_stages`` steps ahead and issues tensor-core instructions.

* ``matmul_kernel`` reads through pointers and masks, so it takes any strides and any
  alignment (sliced views, odd sizes, rows that are not 16-byte multiples).
* ``transpose_kernel`` copies a matrix transposed, tile by tile: TF32 operands are staged
  K-major with it (see matmul._k_major).
* ``matmul_tma_kernel`` reads and writes through TMA tensor descriptors (Hopper's bulk
  tensor copy engine) and is persistent: one program per SM walks many tiles, so tile
  n+1's loads overlap tile n's epilogue. TMA zero-fills out-of-bounds reads and clips
  out-of-bounds writes, so it needs no masks; it needs 16-byte aligned rows instead,
  which ``matmul.py`` checks before choosing it. C leaves in two BLOCK_N/2 halves: the
  store stages C in shared memory, and half the staging buffer leaves room for a deeper
  pipeline (128x256 fp16 tiles get 4 stages instead of 3).
"""
import triton
import triton.language as tl


@triton.jit
def tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    # Grouped ordering: walk GROUP_M rows of tiles column by column, so programs that
    # run together reuse the same B tiles (and, within the group, A tiles) from L2.
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + (tile_id % num_pid_in_group) % group_size_m
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr,
):
    pid_m, pid_n = tile_coords(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    # int64 row offsets: M * stride can pass 2**31 elements on large tensors.
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        # Masked lanes read 0, which adds nothing to the dot product: edge tiles need no padding.
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:  # Triton's CPU interpreter multiplies bf16 bit patterns (triton#11584)
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def matmul_tma_kernel(
    a_desc, b_desc, c_desc, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, NUM_SMS: tl.constexpr,
):
    # A_TRANS / B_TRANS: the operand is a transposed view, so its descriptor covers the
    # contiguous A.T (K x M) / B.T (N x K) and each loaded tile is transposed back.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    # flatten=True lets the pipeliner prefetch the next tile's first K steps during this epilogue.
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            off_k = ki * BLOCK_K
            a = a_desc.load([off_k, off_m]).T if A_TRANS else a_desc.load([off_m, off_k])
            b = b_desc.load([off_n, off_k]).T if B_TRANS else b_desc.load([off_k, off_n])
            if UPCAST:
                a, b = a.to(tl.float32), b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
        c_desc.store([off_m, off_n], left.to(c_desc.dtype))
        c_desc.store([off_m, off_n + BLOCK_N // 2], right.to(c_desc.dtype))


@triton.jit
def transpose_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc, BLOCK: tl.constexpr):
    # y (C x R, contiguous) = x.T. Each program moves one BLOCK x BLOCK tile; the compiler
    # stages it through shared memory so both the reads and the writes are coalesced.
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None].to(tl.int64) * stride_xr + c[None, :] * stride_xc,
                   mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None].to(tl.int64) * R + r[None, :], tile.T, mask=(c[:, None] < C) & (r[None, :] < R))
