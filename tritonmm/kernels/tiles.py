"""What the block programs share: the order tiles are walked in, the fused epilogue, and the hand-over between
kernels (programmatic dependent launch)."""
import triton
import triton.language as tl

# Activations the epilogue fuses, by the name tritonmm.linear takes.
ACTIVATIONS = ("none", "relu", "gelu", "gelu_tanh", "silu")


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


# Programmatic dependent launch (PDL, Hopper and later; launch.pdl): a kernel launched with launch_pdl=True may be
# scheduled before the kernel before it in the stream has ended, once every program of that one has let it
# (let_next_kernel_start) or ended. Each kernel that tritonmm launches so waits first thing (wait_for_previous_kernel),
# and lets the next start after its main loop; letting it start first thing instead lost where the running kernel
# leaves SMs idle (design.md: pdl).


@triton.jit
def wait_for_previous_kernel(PDL: tl.constexpr):
    """With PDL: wait until the kernel before this one in the stream has ended and its writes are visible. Called
    before any memory is read or written."""
    if PDL:
        tl.extra.cuda.gdc_wait()


@triton.jit
def let_next_kernel_start(PDL: tl.constexpr):
    """With PDL: the next kernel in the stream may start its programs (they wait in wait_for_previous_kernel) once
    every program of this one has called this or ended. Called after a program's main loop, before its stores."""
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()


# How a bias broadcasts over C, by the strides of its (M, N) view: "row" is one value per column
# (a linear layer's (N,) bias, strides (0, 1)), "column" one per row, "matrix" anything else.
# Vectors are loaded as vectors: a BLOCK_M x BLOCK_N bias tile costs a shared-memory layout
# conversion as large as the tile (64 KB for 128x256 bf16), which left a 4-stage 128x256 config
# 262176 bytes of shared memory to ask for on the H100 (limit 232448; design.md: vector-bias).
BIAS_KINDS = ("none", "row", "column", "matrix")


# FP8 products' scales (tritonmm.scaled_mm): C = (A * scale_a) @ (B * scale_b), applied to the
# fp32 accumulator. "tensor": one value for the operand; "row": one per row of A, (M, 1);
# "column": one per column of B, (1, N); "none": not an FP8 product.
SCALE_KINDS = ("none", "tensor", "row", "column")


@triton.jit
def epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
             BIAS: tl.constexpr, ACTIVATION: tl.constexpr, SCALE_A: tl.constexpr, SCALE_B: tl.constexpr):
    """scales, then bias + activation, on the fp32 accumulator, before the one cast to the output dtype."""
    if SCALE_A == "tensor":
        acc *= tl.load(scale_a_ptr)
    elif SCALE_A == "row":
        acc *= tl.load(scale_a_ptr + offs_m, mask=offs_m < M, other=0.0)[:, None]
    if SCALE_B == "tensor":
        acc *= tl.load(scale_b_ptr)
    elif SCALE_B == "column":
        acc *= tl.load(scale_b_ptr + offs_n, mask=offs_n < N, other=0.0)[None, :]
    if BIAS == "row":
        acc += tl.load(bias_ptr + offs_n * stride_bias_n, mask=offs_n < N).to(tl.float32)[None, :]
    elif BIAS == "column":
        acc += tl.load(bias_ptr + offs_m * stride_bias_m, mask=offs_m < M).to(tl.float32)[:, None]
    elif BIAS == "matrix":
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        bias = tl.load(bias_ptr + offs_m[:, None].to(tl.int64) * stride_bias_m
                       + offs_n[None, :].to(tl.int64) * stride_bias_n, mask=mask)
        acc += bias.to(tl.float32)
    if ACTIVATION == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACTIVATION == "gelu":  # x * Phi(x), the erf form (F.gelu's default)
        acc = 0.5 * acc * (1.0 + tl.math.erf(acc * 0.7071067811865476))
    elif ACTIVATION == "gelu_tanh":  # 0.5x(1 + tanh(u)) is x * sigmoid(2u), u = sqrt(2/pi)(x + 0.044715x^3)
        acc = acc * tl.sigmoid(1.5957691216057308 * (acc + 0.044715 * acc * acc * acc))
    elif ACTIVATION == "silu":
        acc = acc * tl.sigmoid(acc)
    return acc
