"""The TMA block program: C = A @ B (scaled, + bias, activation) through tensor descriptors, persistent.

The same tiled algorithm as gemm.py, but A, B and (where it can, C_DESC below) C move through TMA
tensor descriptors (Hopper's bulk tensor copy engine), and one program per SM walks many tiles, so
tile n+1's loads overlap tile n's epilogue (NUM_SMS programs: two an SM where a config's PER_SM says, so that
one's prologue and epilogue overlap the other's main loop on short K; design.md: short-k-pairs). TMA
zero-fills out-of-bounds reads and clips out-of-bounds writes, so nothing is masked; it needs 16-byte
aligned rows instead, which the planner checks (staging operands that lack them) before choosing this
path. C leaves in two BLOCK_N/2 halves: the store stages C in shared memory, and half the staging
buffer leaves room for a deeper pipeline (128x256 fp16 tiles get 4 stages instead of 3).

C_DESC false: C's rows are not 16-byte aligned (N odd, say) or C is a transposed view, which TMA
cannot write, and c is C's pointer: each tile is stored through pointers, masked at the edges, in
place of staging C in an aligned buffer and copying it out after the kernel (a launch and C's
bytes twice; design.md: c-through-pointers).

SHIFT: the last tile of each row and column of tiles starts where it ends at C's edge (rounded up to a
multiple of 16 elements, so a box starts 16-byte aligned), not at its grid position, wherever C has more
rows (columns) than a tile. It overlaps the tile before it instead of reaching past the operands' ends,
which TMA fills with zeros at the cost of a read or more (design.md: tma-shift). The shared rows are
computed again from the same operands in the same order, bit for bit the same (tests/test_plan.py); a C
stored through pointers stores each element once, a C stored through its
descriptor stores them twice, the same bits.

BATCH_C: a batch of Z products, C (Z, M, N); the units walk the entries' tiles entry by entry. A and B
each come as a 3-D descriptor over their entries (BATCH_A, BATCH_B), whose loads TMA clips at each entry's
edges, or as a 2-D one where a batch stride of 0 broadcasts the operand; C as a 3-D descriptor, or through
pointers with its batch stride stride_cz. One launch for the batch, where the pointer kernel reads the
entries through masked loads and slicing the batch costs a launch an entry (design.md: batched-tma).

SPLIT_K > 1: each tile runs as SPLIT_K units, one contiguous slice of its K steps each, and a unit
stores its fp32 partial sums, without the epilogue, through pointers into rows [split * M, split * M + M)
of c, the contiguous (SPLIT_K, M, N) workspace that kernels/split_k.py then adds up in slice order with the
epilogue (deterministic: no atomics). Units run slice-major: those that run at once are neighbouring tiles
at the same K, sharing their A and B tiles in L2 as whole tiles do. (Stream-K, whose programs work at
unrelated K positions, lost: design.md, dead ends.)
For products whose tiles leave most SMs idle while K is long (splits.tma_split_for).

PRESPLIT (float32 in tf32x3): A and B arrive split into TF32 high parts and remainders
(kernels/copy.py), stacked in one K-major buffer each: rows [0, M) of A's hold the high parts,
rows [M, 2M) the remainders (B's likewise, by N). Each K step loads four tiles and sums
A_lo B_hi + A_hi B_lo + A_hi B_hi: three TF32 products read straight from shared memory, where
tl.dot's own "tf32x3" splits every tile it loads, in registers. A tile's rows past M read the
remainders, which only reach C's rows past M, and the store clips those. Each step's sum starts
from zero and is added to the accumulator in fp32 arithmetic: Hopper's tensor cores truncate as
they accumulate, and a tensor-core sum over all of K had 25x the error (2.9e-5 at 4096^3; every
256 of K: 1.9e-6; every step: 3.0e-7, against SGEMM's 1.2e-6; design.md: tf32x3-step-sum). Inf and NaN:
copy.py gives every operand of magnitude 2**-102 or more a nonzero remainder of its sign, so a
remainder times an Inf is an Inf of the sign IEEE gives that term, never 0 * Inf = NaN.
"""
import triton
import triton.language as tl

from .tiles import epilogue, let_next_kernel_start, tile_coords, wait_for_previous_kernel


@triton.jit
def gemm_tma_kernel(
    a_desc, b_desc, c, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, K, Z, stride_bias_m, stride_bias_n,
    stride_cz, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr, BATCH_A: tl.constexpr, BATCH_B: tl.constexpr,
    BATCH_C: tl.constexpr, BIAS: tl.constexpr, ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, NUM_SMS: tl.constexpr, PRESPLIT: tl.constexpr,
    C_DESC: tl.constexpr, SPLIT_K: tl.constexpr, SHIFT: tl.constexpr, PDL: tl.constexpr,
):
    wait_for_previous_kernel(PDL)
    # A_TRANS / B_TRANS: the operand is a transposed view, so its descriptor covers the
    # contiguous A.T (K x M) / B.T (N x K) and each loaded tile is transposed back.
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    tiles = num_pid_m * num_pid_n
    steps = tl.cdiv(k_tiles, SPLIT_K)
    # SHIFT: where the last row (column) of tiles starts, at C's edge minus a tile, 16-element aligned (docstring)
    last_m = tl.cdiv(tl.maximum(M - BLOCK_M, 0), 16) * 16
    last_n = tl.cdiv(tl.maximum(N - BLOCK_N, 0), 16) * 16
    # flatten=True lets the pipeliner prefetch the next tile's first K steps during this epilogue.
    for unit in tl.range(tl.program_id(0), tiles * SPLIT_K * Z, NUM_SMS, flatten=True):
        z = 0
        if SPLIT_K > 1:
            # Slice-major: the units that run at once are neighbouring tiles at the same K, which
            # share their A and B tiles in L2 as whole tiles do (module docstring).
            split = unit // tiles
            pid_m, pid_n = tile_coords(unit % tiles, num_pid_m, num_pid_n, GROUP_M)
            first = split * steps
            last = tl.minimum(first + steps, k_tiles)
        else:
            split = 0
            if BATCH_C:  # entry-major: the units that run at once are neighbouring tiles of one entry
                z = unit // tiles
                pid_m, pid_n = tile_coords(unit % tiles, num_pid_m, num_pid_n, GROUP_M)
            else:
                pid_m, pid_n = tile_coords(unit, num_pid_m, num_pid_n, GROUP_M)
            first = 0
            last = k_tiles
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        first_m, first_n = off_m, off_n  # the rows and columns this tile owns start here
        if SHIFT:  # the last tile of each row and column moved back inside C (module docstring)
            off_m = tl.minimum(off_m, last_m)
            off_n = tl.minimum(off_n, last_n)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        if PRESPLIT:
            tl.static_assert(not A_TRANS and B_TRANS, "split operands are staged K-major")
            tl.static_assert(SPLIT_K == 1, "split operands are not split over K")
            for ki in range(k_tiles):
                off_k = ki * BLOCK_K
                a_hi, b_hi = a_desc.load([off_m, off_k]), b_desc.load([off_n, off_k]).T
                part = tl.dot(a_desc.load([M + off_m, off_k]), b_hi, tl.zeros((BLOCK_M, BLOCK_N), tl.float32),
                              input_precision="tf32")
                part = tl.dot(a_hi, b_desc.load([N + off_n, off_k]).T, part, input_precision="tf32")
                acc += tl.dot(a_hi, b_hi, part, input_precision="tf32")
        else:
            for ki in range(first, last):
                off_k = ki * BLOCK_K
                a = load_tile(a_desc, z, off_m, off_k, BLOCK_M, BLOCK_K, A_TRANS, BATCH_A)
                b = load_tile(b_desc, z, off_k, off_n, BLOCK_K, BLOCK_N, B_TRANS, BATCH_B)
                if UPCAST:
                    a, b = a.to(tl.float32), b.to(tl.float32)
                acc = tl.dot(a, b, acc, input_precision=INPUT_PRECISION)
        offs_m = off_m + tl.arange(0, BLOCK_M)
        offs_n = off_n + tl.arange(0, BLOCK_N)
        if SPLIT_K > 1:  # this slice's fp32 partial sums into c, the (SPLIT_K, M, N) workspace; no epilogue
            tl.static_assert(not C_DESC, "a workspace is stored through pointers")
        else:
            acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m,
                           stride_bias_n, BIAS, ACTIVATION, SCALE_A, SCALE_B)
        if C_DESC:
            left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
            if BATCH_C:
                c.store([z, off_m, off_n], left.to(c.dtype).reshape(1, BLOCK_M, BLOCK_N // 2))
                c.store([z, off_m, off_n + BLOCK_N // 2], right.to(c.dtype).reshape(1, BLOCK_M, BLOCK_N // 2))
            else:
                c.store([off_m, off_n], left.to(c.dtype))
                c.store([off_m, off_n + BLOCK_N // 2], right.to(c.dtype))
        else:
            mask = (offs_m[:, None] >= first_m) & (offs_m[:, None] < M) & (offs_n[None, :] >= first_n) & \
                (offs_n[None, :] < N)
            c_ptrs = c + (split * M + offs_m)[:, None].to(tl.int64) * stride_cm + \
                offs_n[None, :].to(tl.int64) * stride_cn
            if BATCH_C:
                c_ptrs += z.to(tl.int64) * stride_cz
            tl.store(c_ptrs, acc.to(c.dtype.element_ty), mask=mask)
    let_next_kernel_start(PDL)


@triton.jit
def load_tile(desc, z, row, col, ROWS: tl.constexpr, COLS: tl.constexpr, TRANS: tl.constexpr, BATCH: tl.constexpr):
    """The ROWS x COLS tile of an operand at (row, col). TRANS: desc covers the operand's transpose (a
    transposed view's contiguous matrix), whose COLS x ROWS tile is loaded and transposed back. BATCH: desc is
    3-D, (entries, rows, columns), and the tile is entry z's: TMA clips each entry at its own edges."""
    if TRANS:
        if BATCH:
            tile = desc.load([z, col, row]).reshape(COLS, ROWS).T
        else:
            tile = desc.load([col, row]).T
    else:
        if BATCH:
            tile = desc.load([z, row, col]).reshape(ROWS, COLS)
        else:
            tile = desc.load([row, col])
    return tile


def fit_descriptors(nargs: dict) -> None:
    """Sets each descriptor's block to the config's tile, before each launch (launch.launch_step); a 3-D
    descriptor (a batch's) one entry deep."""
    BM, BN, BK = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    blocks = [("a_desc", [BK, BM] if nargs["A_TRANS"] else [BM, BK]),
              ("b_desc", [BN, BK] if nargs["B_TRANS"] else [BK, BN])]
    if nargs["C_DESC"]:
        blocks.append(("c", [BM, BN // 2]))  # the kernel stores C in two halves
    for name, block in blocks:
        desc = nargs[name]
        desc.block_shape = [1, *block] if len(desc.shape) == 3 else block
