"""tf32x3 in Gluon (Triton >= 3.8, Hopper): C = A @ B in float32 at float32's accuracy, from three TF32 wgmma a K step.

gemm_tma.py's PRESPLIT path computes the same sums in `tl`: A and B arrive split into TF32 high parts and remainders
(kernels/copy.py; rows [0, M) of A's K-major buffer hold the high parts, rows [M, 2M) the remainders, B's likewise by
N), and each K step's A_lo B_hi + A_hi B_lo + A_hi B_hi is summed from zero on the tensor cores, then added to the
total in fp32 arithmetic (Hopper's tensor cores truncate as they accumulate: design.md, tf32x3-step-sum). In `tl`
that add waits for the step's three wgmma, and while the warps add the tensor cores idle.

Here the warp roles of gluon_gemm.py are written out, and one warpgroup's adds run under another's wgmma:
- a loader warp fills a ring of STAGES slots, each holding a K step's four float32 tiles (A's high parts and
  remainders as two 64-row slabs each, B's high parts and remainders as 128 x BLOCK_K K-major boxes);
- two consumer warpgroups share each 128 x 128 tile of C, 64 rows (a slab) each: their step sums take 64
  registers a thread beside the 64 of the total, where a 128-row slab would need 256. Each waits only for its
  own step's wgmma, so while one adds, the other's wgmma run: end to end, split copies included, 2.3x SGEMM at
  4096^3 where the `tl` kernel runs 1.8x (design.md: gluon-tf32x3).
- PINGPONG (off as shipped): the two take turns issuing a K step's wgmma (the `order` barriers), a strict
  ping-pong. It measured no faster: the order of the timings in a round moved both more (gluon-tf32x3).

C is stored by TMA from shared memory in two 64-column halves a slab (the room saved is a third ring slot). Any
M, N, K the split buffers hold (their rows are padded to 128 bytes); C's rows must be 16 bytes apart (N a multiple
of 4), as TMA stores them.
"""
import functools

import torch
import triton

from .gluon_gemm import _MISSING, GROUP_M, SMEM_BYTES, Schedule, _tile_offsets, gl, jit

if _MISSING is None:  # Triton >= 3.8; below it the kernel is defined but never compiled (gluon_gemm.available)
    from .gluon_gemm import TensorDescriptor, fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

# Two consumer warpgroups on 64-row slabs of 128x128 tiles, C stored in two column halves: warps, registers at launch
# and setmaxnreg's budgets as gluon_gemm's schedules of two consumers.
NAME = "tf32x3"  # the schedule name the planner gives this kernel (rules.GLUON_TF32X3_SCHEDULE); launch.gluon reads it
SCHEDULE = Schedule(consumers=2, ctas=1, tile_m=128, tile_n=128, c_split=2, slabs=2)
BLOCK_M, BLOCK_N, BLOCK_K = SCHEDULE.tile_m, SCHEDULE.tile_n, 32  # BLOCK_K: 128 bytes of float32, the widest swizzle
SLAB = BLOCK_M // SCHEDULE.slabs  # a consumer warpgroup's rows of a tile
CONSUMER_REGS = gl.constexpr(SCHEDULE.consumer_regs())


@jit
def _loader(a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K):
    """One warp: a slot is the K step's A high-part and remainder slabs (two each) and B's two boxes."""
    BK: gl.constexpr = a_desc.block_shape[1]
    BN: gl.constexpr = b_desc.block_shape[0]
    BM: gl.constexpr = 2 * a_desc.block_shape[0]
    STAGES: gl.constexpr = b_bufs.shape[0] // 2
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN)
    nbytes: gl.constexpr = 4 * a_desc.nbytes_per_cta + 2 * b_desc.nbytes_per_cta
    slot = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BM, BN, GROUP_M)
        for k in range(0, K, BK):
            s = slot % STAGES
            mbarrier.wait(empty.index(s), (slot // STAGES & 1) ^ 1)  # a fresh barrier passes parity 1 at once
            mbarrier.expect(ready.index(s), nbytes)
            for part in gl.static_range(2):  # high parts, then remainders: rows part * M onward
                for j in gl.static_range(2):
                    tma.async_load(a_desc, [part * M + off_m + j * (BM // 2), k], ready.index(s),
                                   a_bufs.index((s * 2 + part) * 2 + j))
                tma.async_load(b_desc, [part * N + off_n, k], ready.index(s), b_bufs.index(s * 2 + part))
            slot += 1


@jit
def _consumer(a_bufs, b_bufs, c_desc, c_bufs, ready, empty, order, M, N, K, WHICH: gl.constexpr,
              PINGPONG: gl.constexpr):
    """Consumer WHICH (0 or 1): slab WHICH of every tile of the program."""
    BN: gl.constexpr = 2 * c_desc.block_shape[1]
    BM: gl.constexpr = 2 * c_desc.block_shape[0]
    BK: gl.constexpr = a_bufs.shape[2]
    STAGES: gl.constexpr = b_bufs.shape[0] // 2
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                         instr_shape=[16, BN, 8])
    c_buf = c_bufs.index(WHICH)
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN)
    k_steps = gl.cdiv(K, BK)
    slot = 0
    for tile in range(gl.program_id(0), num_pid_m * num_pid_n, gl.num_programs(0)):
        off_m, off_n = _tile_offsets(tile, num_pid_m, num_pid_n, BM, BN, GROUP_M)
        off_m += WHICH * (BM // 2)
        total = gl.zeros((BM // 2, BN), gl.float32, acc_layout)
        for k in range(k_steps):
            s = slot % STAGES
            mbarrier.wait(ready.index(s), slot // STAGES & 1)
            if PINGPONG:  # consumer 0 issues a step first, then 1; each waits for the other's previous turn
                mbarrier.wait(order.index(WHICH), (slot & 1) ^ (1 - WHICH))
            a_hi, a_lo = a_bufs.index(s * 4 + WHICH), a_bufs.index(s * 4 + 2 + WHICH)
            b_hi, b_lo = b_bufs.index(s * 2).permute((1, 0)), b_bufs.index(s * 2 + 1).permute((1, 0))
            # The step's sum from zero (use_acc=False: total's registers are only the shape), the small terms
            # first, so that the largest products are added to sums of their own size.
            part = warpgroup_mma(a_lo, b_hi, total, use_acc=False, precision="tf32", is_async=True)
            part = warpgroup_mma(a_hi, b_lo, part, precision="tf32", is_async=True)
            part = warpgroup_mma(a_hi, b_hi, part, precision="tf32", is_async=True)
            if PINGPONG:
                mbarrier.arrive(order.index(1 - WHICH))
            total += warpgroup_mma_wait(0, deps=(part, ))
            mbarrier.arrive(empty.index(s))  # the step's wgmma have read the slot
            slot += 1
        # C staged in shared memory and stored by TMA (clipped at M and N) in two halves, each store left in flight
        # until the staging buffer is needed again.
        left, right = total.reshape([BM // 2, 2, BN // 2]).permute(0, 2, 1).split()
        tma.store_wait(0)
        c_buf.store(left)
        fence_async_shared()
        tma.async_store(c_desc, [off_m, off_n], c_buf)
        tma.store_wait(0)
        c_buf.store(right)
        fence_async_shared()
        tma.async_store(c_desc, [off_m, off_n + BN // 2], c_buf)
    tma.store_wait(0)


@jit(do_not_specialize=["M", "N", "K"])
def gluon_tf32x3_kernel(a_desc, b_desc, c_desc, M, N, K, STAGES: gl.constexpr, PINGPONG: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(gl.float32, [STAGES * 4] + a_desc.block_shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(gl.float32, [STAGES * 2] + b_desc.block_shape, b_desc.layout)
    c_bufs = gl.allocate_shared_memory(gl.float32, [2] + c_desc.block_shape, c_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    order = mbarrier.allocate_mbarrier(batch=2)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2)  # both consumers read every slot
    for i in gl.static_range(2):
        mbarrier.init(order.index(i), count=1)
    gl.warp_specialize([
        (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, order, M, N, K, 0, PINGPONG)),
        (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, order, M, N, K, gl.constexpr(1), PINGPONG)),
        (_loader, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, M, N, K)),
    ], [4, 1], [CONSUMER_REGS, 24])


def stages() -> int:
    """Ring slots beside C's staging (two slabs' 64-column halves) and 1 KiB for the barriers."""
    slot = 2 * (BLOCK_M + BLOCK_N) * BLOCK_K * 4
    return min(4, (SMEM_BYTES - SCHEDULE.consumers * SLAB * BLOCK_N // SCHEDULE.c_split * 4 - 1024) // slot)


@functools.lru_cache(maxsize=None)
def blocks() -> dict:
    """{operand: (TMA block shape, NVMMA shared layout)}; cached, as gluon_gemm._blocks."""
    shapes = {"a": [SLAB, BLOCK_K], "b": [BLOCK_N, BLOCK_K], "c": [SLAB, BLOCK_N // SCHEDULE.c_split]}
    return {name: (shape, gl.NVMMASharedLayout.get_default_for(shape, gl.float32)) for name, shape in shapes.items()}


def constexprs(pingpong: bool = False) -> tuple:
    """(the kernel's constexpr arguments, its launch options)."""
    return {"STAGES": stages(), "PINGPONG": pingpong}, {"num_warps": SCHEDULE.warps(), "maxnreg": SCHEDULE.maxnreg()}


def run(a_split, b_split, out, pingpong: bool = False) -> tuple:
    """out = A @ B from split operands: a_split the K-major (2M, K) buffer of staging.split_a, b_split the (K, 2N)
    view of staging.split_b's (2N, K) buffer; out a row-major float32 (M, N) whose rows TMA stores (N a multiple
    of 4). Returns (out, launched) as gluon_gemm.run does. The caller (rules.gluon_tf32x3, the tests) checks the
    arguments."""
    if _MISSING is not None:
        raise RuntimeError(f"the Gluon tf32x3 kernel is unavailable here: {_MISSING}")
    (M2, K), N = a_split.shape, b_split.shape[1] // 2
    M = M2 // 2
    if M == 0 or N == 0 or K == 0:
        return (out if K else out.zero_()), None
    (a_block, a_layout), (b_block, b_layout), (c_block, c_layout) = blocks().values()
    a_desc = TensorDescriptor(a_split, [2 * M, K], [a_split.stride(0), 1], a_block, a_layout)
    b_desc = TensorDescriptor(b_split.T, [2 * N, K], [b_split.stride(1), 1], b_block, b_layout)
    c_desc = TensorDescriptor(out, [M, N], [out.stride(0) if M > 1 else N, 1], c_block, c_layout)
    args = (a_desc, b_desc, c_desc, M, N, K)
    consts, options = constexprs(pingpong)
    with torch.cuda.device(a_split.device):
        sms = torch.cuda.get_device_properties(a_split.device).multi_processor_count
        grid = (min(sms, triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)), )
        compiled = gluon_tf32x3_kernel[grid](*args, **consts, **options)
    named = dict(zip(gluon_tf32x3_kernel.arg_names, args), **consts)
    return out, (compiled, grid, args[:3], tuple(named[n] for n in gluon_tf32x3_kernel.arg_names[3:]))
