"""A Gluon GEMM for Hopper (sm_90a): C = A @ B in bf16/fp16, fp32 accumulate, persistent and warp-specialized.

gemm_tma.py writes the same algorithm in `tl`: TMA descriptors, one program per SM walking tiles in grouped
order, C stored through TMA. There the compiler decides what happens inside a tile: how far the loads run
ahead (num_stages), where the barriers go, which warps issue what. Gluon (triton.experimental.gluon, Triton
>= 3.8) puts those decisions in the source, as cuda_reference steps 14-16 do in CUDA:

- Explicit warp specialization. A worker partition of one warp (24 registers after setmaxnreg) only issues
  TMA loads; the consumer warps (the default partition) only wait, issue wgmma and store C, with the registers
  the loader gives back (240 a thread: the 128x256 fp32 accumulator takes 128 over two warpgroups). The next
  tile's first loads are in flight during this tile's epilogue without a software pipeliner (gemm_tma's
  flatten=True).
- An mbarrier ring of STAGES slots, an A tile (or a tile's slabs of A) and a B tile each: the loader waits for
  a slot's `empty` barrier, the consumer for its `ready` barrier (the TMA counts the bytes in), and a slot is
  released once the wgmma that read it has retired (warpgroup_mma_wait(1): one wgmma stays in flight across K
  steps).
- SCHEDULES: "cooperative", one consumer partition of 8 warps, each warpgroup 64 rows of a 128x256 tile (as
  step 16 and cuBLAS), C staged and stored in two 128x128 halves so that 4 stages fit in 227 KiB;
  "cooperative-s3", C staged whole and 3 stages; "pingpong", two consumer partitions of 4 warps taking
  alternate 128x128 tiles (a 128x256 fp32 accumulator does not fit one warpgroup's registers), their main
  loops taking turns (the `order` barriers) so that one's epilogue overlaps the other's wgmma; "cluster",
  cooperative over 2x1 thread-block clusters: the two CTAs compute vertically adjacent tiles, and the B tile
  they share is loaded once, by CTA 0, and multicast into both (CUDA step 15 added this to step 14: 0.87
  against 0.86x cuBLAS at 4096^3 bf16, equal elsewhere; docs/design.md: ladder-hopper-steps); "wide", three
  consumer partitions of one warpgroup sharing each 192x128 tile, 64 rows (a slab) each: a tile of 192 rows,
  which `tl` cannot write (a block's shape is a power of two), as three power-of-two slabs. Tiles of 192x128
  cut a 1536^3 product into 96 tiles, one wave of 132 SMs, where 128x256 tiles make 72 and 128x128 tiles 144
  (two waves); cuBLAS runs 192-row tiles there (the planner's use: docs/design.md, gluon-wide). The device
  check, bench/gluon_check.py, times all five.

Gluon programs a cluster as one program over both CTAs: shapes are the cluster's (256-row tiles), and a
layout's cga_layout says how the CTAs split them (A and C by rows, [[1, 0]]; B broadcast, [[0, 0]]). The
compiler issues B's multicast from CTA 0 only, so CTA 0 may refill a slot only once both CTAs' consumers have
released it: `pair` is a barrier of the lead CTA that both arrive on (allocate_mbarrier(two_ctas=True)).

Any shape whose rows TMA can address (K and N multiples of 8): the descriptors carry the real shapes; TMA
zero-fills reads past M, N and K and clips C's stores. B is K x N row-major or w.T of an N x K weight (read
K-major). A batch runs as 2-D views stacking its entries' rows (design.md: gluon-batched-short-k).
"""
import functools
from typing import NamedTuple

import torch
import triton
import triton.language as tl

from . import version
from .gluon_args import check as _check, check_batched as _check_batched


try:
    if version(triton.__version__) < (3, 8):
        raise ImportError(f"Triton {triton.__version__} is installed; the Gluon GEMM needs Triton >= 3.8 "
                          "(its Gluon: tma.async_load, multicast, warp_specialize with register counts)")
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (cluster, fence_async_shared, mbarrier, tma,
                                                                  warpgroup_mma, warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    _MISSING = None
    jit = gluon.jit
except ImportError as exc:  # the kernels below are then defined but never compiled: available() is False
    _MISSING = str(exc)
    gl = tl  # a stand-in for their annotations

    def jit(fn=None, **_):
        return fn if fn is not None else (lambda f: f)

BLOCK_K = 64  # the K step
GROUP_M = gl.constexpr(8)  # tiles.tile_coords' grouping: programs running together share B (and A) tiles in L2
SMEM_BYTES, REGISTERS = 232448, 65536  # what an sm_90 block may opt into (227 KiB); an SM's 32-bit registers


@jit
def _tile_offsets(tile, num_pid_m, num_pid_n, BM: gl.constexpr, BN: gl.constexpr, GROUP: gl.constexpr):
    # tiles.tile_coords: GROUP rows of tiles walked column by column
    in_group = GROUP * num_pid_n
    first_m = (tile // in_group) * GROUP
    group_m = gl.minimum(num_pid_m - first_m, GROUP)
    return (first_m + (tile % in_group) % group_m) * BM, ((tile % in_group) // group_m) * BN


@jit
def _unit_offsets(unit, M, N, num_pid_m, num_pid_n, BM: gl.constexpr, BN: gl.constexpr, GROUP: gl.constexpr,
                  BATCHED: gl.constexpr):
    """(entry, row, column) of a unit, entry by entry. BATCHED: the last tiles start at M - BM and N - BN, inside
    the entry, never in the next one's rows (shared rows get the same bits twice: gemm_tma.py's SHIFT)."""
    tiles = num_pid_m * num_pid_n
    off_m, off_n = _tile_offsets(unit % tiles, num_pid_m, num_pid_n, BM, BN, GROUP)
    if BATCHED:
        off_m = gl.minimum(off_m, M - BM)
        off_n = gl.minimum(off_n, N - BN)
    return unit // tiles, off_m, off_n


@jit
def _loader(a_desc, b_desc, a_bufs, b_bufs, ready, empty, pair, M, N, K, Z, a_rows, b_rows, BN: gl.constexpr,
            B_KMAJOR: gl.constexpr, SLABS: gl.constexpr, BATCHED: gl.constexpr):
    """One warp: fills the ring in tile order, the order in which the consumers drain it; a slot holds SLABS
    boxes of A (a tile's row slabs) and one of B. Entry z's rows start at z * a_rows and z * b_rows (0: broadcast)."""
    BM: gl.constexpr = a_desc.block_shape[0] * SLABS
    BK: gl.constexpr = a_desc.block_shape[1]
    STAGES: gl.constexpr = b_bufs.shape[0]
    CLUSTER: gl.constexpr = gl.num_ctas()
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN)
    nbytes: gl.constexpr = SLABS * a_desc.nbytes_per_cta + b_desc.nbytes_per_cta  # B whole in each CTA of a cluster
    slot = 0
    for unit in range(gl.program_id(0), num_pid_m * num_pid_n * Z, gl.num_programs(0)):
        z, off_m, off_n = _unit_offsets(unit, M, N, num_pid_m, num_pid_n, BM, BN, GROUP_M // CLUSTER, BATCHED)
        row_a, row_b = z * a_rows + off_m, z * b_rows
        for k in range(0, K, BK):
            s = slot % STAGES
            # A fresh barrier is in phase 0: a wait for parity 1 passes at once, so the first STAGES loads go
            # out before any consumer has released a slot.
            parity = (slot // STAGES & 1) ^ 1
            mbarrier.wait(empty.index(s), parity)
            if CLUSTER > 1:
                mbarrier.wait(pair.index(s), parity)  # both CTAs' consumers (only the lead CTA waits)
            mbarrier.expect(ready.index(s), nbytes)
            for j in gl.static_range(SLABS):  # a slab wholly past M is zero-filled, its bytes still counted
                tma.async_load(a_desc, [row_a + j * a_desc.block_shape[0], k], ready.index(s),
                               a_bufs.index(s * SLABS + j))
            if B_KMAJOR:
                tma.async_load(b_desc, [row_b + off_n, k], ready.index(s), b_bufs.index(s), multicast=CLUSTER > 1)
            else:
                tma.async_load(b_desc, [row_b + k, off_n], ready.index(s), b_bufs.index(s), multicast=CLUSTER > 1)
            slot += 1


@jit
def _consumer(a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN: gl.constexpr,
              B_KMAJOR: gl.constexpr, WHICH: gl.constexpr, CONSUMERS: gl.constexpr, SLABS: gl.constexpr,
              BATCHED: gl.constexpr):
    """Consumer WHICH of CONSUMERS: where SLABS is 1, the program's tiles WHICH, WHICH + CONSUMERS, ... whole;
    where SLABS is CONSUMERS, slab WHICH (its rows) of every tile of the program. wgmma, then C by TMA."""
    SLAB_M: gl.constexpr = c_desc.block_shape[0]  # the rows this consumer computes of a tile
    BM: gl.constexpr = SLAB_M * SLABS
    SLAB: gl.constexpr = WHICH % SLABS
    TURNS: gl.constexpr = CONSUMERS // SLABS  # consumers taking tiles in turn: 2 ping-pong, else 1
    BK: gl.constexpr = a_bufs.shape[2]
    STAGES: gl.constexpr = b_bufs.shape[0]
    CLUSTER: gl.constexpr = gl.num_ctas()
    C_SPLIT: gl.constexpr = BN // c_desc.block_shape[1]
    # Warps stacked along M, 16 rows each (8 warps: two warpgroups of 64 rows, each issuing m64nBNk16); in a
    # cluster the CTAs split the rows as C's layout says.
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                         instr_shape=[16, BN, 16], cga_layout=c_desc.layout.cga_layout)
    c_buf = c_bufs.index(WHICH)
    num_pid_m = gl.cdiv(M, BM)
    num_pid_n = gl.cdiv(N, BN)
    k_steps = gl.cdiv(K, BK)
    step = gl.num_programs(0)
    nth = WHICH // SLABS  # the program's nth tile, whose K steps took ring slots nth * k_steps onward
    for unit in range(gl.program_id(0) + nth * step, num_pid_m * num_pid_n * Z, TURNS * step):
        z, off_m, off_n = _unit_offsets(unit, M, N, num_pid_m, num_pid_n, BM, BN, GROUP_M // CLUSTER, BATCHED)
        off_m += z * M + SLAB * SLAB_M  # C's 2-D view: entry z's rows start at z * M
        if TURNS > 1:
            # Ping-pong: the main loops take turns. Besides overlapping one's epilogue with the other's wgmma,
            # this keeps each consumer at most one phase ahead of a slot's barrier, which parity waits need.
            mbarrier.wait(order.index(WHICH), (nth // TURNS & 1) ^ (1 - WHICH))
        acc = gl.zeros((SLAB_M, BN), gl.float32, acc_layout)
        slot = nth * k_steps
        for k in range(k_steps):
            s = slot % STAGES
            mbarrier.wait(ready.index(s), slot // STAGES & 1)
            b = b_bufs.index(s).permute((1, 0)) if B_KMAJOR else b_bufs.index(s)  # N x K read as K x N
            acc = warpgroup_mma(a_bufs.index(s * SLABS + SLAB), b, acc, use_acc=k > 0, is_async=True)
            # Retire all but this wgmma: the one before it has read its slot, which goes back to the loader.
            acc = warpgroup_mma_wait(1, deps=(acc, ))
            _release(empty, pair, (slot + STAGES - 1) % STAGES, k > 0, CLUSTER)
            slot += 1
        if TURNS > 1:
            mbarrier.arrive(order.index(1 - WHICH))
        acc = warpgroup_mma_wait(0, deps=(acc, ))
        _release(empty, pair, (slot + STAGES - 1) % STAGES, True, CLUSTER)
        # C rounded, staged in shared memory and stored by TMA (clipped at M and N), the store left in flight
        # while the next tile's wgmma run: the staging buffer is rewritten only once the store has read it.
        tma.store_wait(0)
        if C_SPLIT == 1:
            c_buf.store(acc.to(c_desc.dtype))
            fence_async_shared()
            tma.async_store(c_desc, [off_m, off_n], c_buf)
        else:  # two BN/2 halves through one buffer: the room saved is a ring slot (gemm_tma does the same)
            left, right = acc.reshape([SLAB_M, 2, BN // 2]).permute(0, 2, 1).split()
            c_buf.store(left.to(c_desc.dtype))
            fence_async_shared()
            tma.async_store(c_desc, [off_m, off_n], c_buf)
            tma.store_wait(0)
            c_buf.store(right.to(c_desc.dtype))
            fence_async_shared()
            tma.async_store(c_desc, [off_m, off_n + BN // 2], c_buf)
        nth += TURNS
    tma.store_wait(0)


@jit
def _release(empty, pair, s, pred, CLUSTER: gl.constexpr):
    mbarrier.arrive(empty.index(s), pred=pred)
    if CLUSTER > 1:
        mbarrier.arrive(pair.index(s), pred=pred)  # on the lead CTA's barrier, from both CTAs


@jit(do_not_specialize=["M", "N", "K", "Z", "a_rows", "b_rows"])
def gluon_gemm_kernel(a_desc, b_desc, c_desc, M, N, K, Z, a_rows, b_rows, B_KMAJOR: gl.constexpr,
                      STAGES: gl.constexpr, CONSUMERS: gl.constexpr, SLABS: gl.constexpr, CONSUMER_REGS: gl.constexpr,
                      BATCHED: gl.constexpr):
    dtype: gl.constexpr = a_desc.dtype
    BN: gl.constexpr = b_desc.block_shape[0] if B_KMAJOR else b_desc.block_shape[1]
    a_bufs = gl.allocate_shared_memory(dtype, [STAGES * SLABS] + a_desc.block_shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(dtype, [STAGES] + b_desc.block_shape, b_desc.layout)
    c_bufs = gl.allocate_shared_memory(dtype, [CONSUMERS] + c_desc.block_shape, c_desc.layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)  # each CTA's own
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    pair = mbarrier.allocate_mbarrier(batch=STAGES, two_ctas=gl.num_ctas() > 1)  # the lead CTA's, for both
    order = mbarrier.allocate_mbarrier(batch=2)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)  # the loader's expect; the TMA's bytes complete the phase
        mbarrier.init(empty.index(i), count=SLABS)  # the consumer that read the slot, or each slab's
        mbarrier.init(pair.index(i), count=SLABS)  # in a cluster: counted once per CTA and consumer
    for i in gl.static_range(2):
        mbarrier.init(order.index(i), count=1)
    # The argument tuples are spelled out in the call: a tuple held in a variable turns constexprs into tensors.
    if CONSUMERS == 1:
        gl.warp_specialize([
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         0, 1, 1, BATCHED)),
            (_loader, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, pair, M, N, K, Z, a_rows, b_rows, BN,
                       B_KMAJOR, 1, BATCHED)),
        ], [1], [24])
    elif CONSUMERS == 2:
        gl.warp_specialize([
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         0, 2, 1, BATCHED)),
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         gl.constexpr(1), gl.constexpr(2), gl.constexpr(1), BATCHED)),
            (_loader, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, pair, M, N, K, Z, a_rows, b_rows, BN,
                       B_KMAJOR, 1, BATCHED)),
        ], [4, 1], [CONSUMER_REGS, 24])
    else:  # three slabs of each tile
        gl.warp_specialize([
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         0, 3, 3, BATCHED)),
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         gl.constexpr(1), gl.constexpr(3), gl.constexpr(3), BATCHED)),
            (_consumer, (a_bufs, b_bufs, c_desc, c_bufs, ready, empty, pair, order, M, N, K, Z, BN, B_KMAJOR,
                         gl.constexpr(2), gl.constexpr(3), gl.constexpr(3), BATCHED)),
            (_loader, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, pair, M, N, K, Z, a_rows, b_rows, BN,
                       B_KMAJOR, 3, BATCHED)),
        ], [4, 4, 1], [CONSUMER_REGS, CONSUMER_REGS, 24])
    if gl.num_ctas() > 1:
        cluster.barrier()  # neither CTA exits while the other may still arrive on its barriers


# ---------------------------------------------------------------------------------------------------------------
# Host side

class Schedule(NamedTuple):
    consumers: int  # consumer partitions
    ctas: int  # CTAs a cluster
    tile_m: int  # rows of the tile a program (a cluster's CTAs together) computes
    tile_n: int
    c_split: int  # C stored in how many column blocks
    slabs: int = 1  # consumers sharing each tile, 64 rows each (else each consumer takes whole tiles)

    def warps(self) -> int:
        """Warps the kernel is launched with: the default partition's (consumer 0); the workers add theirs."""
        return 8 if self.consumers == 1 else 4

    def maxnreg(self) -> int:
        """Registers a thread at launch: the register file over every warpgroup's slot (the loader's one warp
        takes a whole one), in steps of 8."""
        slots = 4 * (self.consumers * self.warps() // 4 + 1)
        return REGISTERS // (32 * slots) // 8 * 8

    def consumer_regs(self) -> int:
        """What setmaxnreg gives each worker consumer warpgroup: the file less the loader's 24 a thread, shared
        with the default partition (232 for two consumers, as cuda_reference step 16 and CUTLASS)."""
        return min(232, (REGISTERS // 128 - 24) // self.consumers // 8 * 8)


SCHEDULES = {
    "cooperative": Schedule(1, 1, 128, 256, 2),
    "cooperative-s3": Schedule(1, 1, 128, 256, 1),
    "pingpong": Schedule(2, 1, 128, 128, 1),
    "cluster": Schedule(1, 2, 256, 256, 2),
    "wide": Schedule(3, 1, 192, 128, 1, slabs=3),
}
DEFAULT_SCHEDULE = "cooperative"  # cuda_reference step 16's design; the device check compares the others


def available(device=None) -> tuple:
    """(True, "") where matmul can run: Triton >= 3.8 and a compute capability 9.0 GPU (wgmma and setmaxnreg are
    sm_90a's); otherwise (False, the reason)."""
    if _MISSING is not None:
        return False, _MISSING
    if not torch.cuda.is_available():
        return False, "no CUDA GPU: the Gluon GEMM runs on Hopper (compute capability 9.0)"
    capability = torch.cuda.get_device_capability(device)
    if capability != (9, 0):
        return False, f"compute capability {capability}: the Gluon GEMM is written for sm_90a (H100, H200) only"
    return True, ""


def stages(schedule: str) -> int:
    """Ring slots that fit one CTA's shared memory beside its C staging buffers (and 1 KiB for the barriers)."""
    s = SCHEDULES[schedule]
    rows = s.tile_m // s.ctas  # a CTA's
    slot = (rows + s.tile_n) * BLOCK_K * 2
    staging = s.consumers * rows // s.slabs * s.tile_n // s.c_split * 2
    return min(6, (SMEM_BYTES - staging - 1024) // slot)


@functools.lru_cache(maxsize=None)
def _blocks(schedule: str, b_kmajor: bool, dtype: torch.dtype) -> dict:
    """{operand: (TMA block shape, NVMMA shared layout)}, shapes and layouts a cluster's: in a 2-CTA cluster A and
    C are split by rows between the CTAs and B is whole in both (multicast). Cached: building the layouts costs
    more host time than the launch."""
    s = SCHEDULES[schedule]
    gl_dtype = gl.bfloat16 if dtype == torch.bfloat16 else gl.float16
    rows, by_rows, whole = s.tile_m // s.slabs, [[1, 0]] if s.ctas > 1 else None, [[0, 0]] if s.ctas > 1 else None
    blocks = {"a": ([rows, BLOCK_K], by_rows),
              "b": ([s.tile_n, BLOCK_K] if b_kmajor else [BLOCK_K, s.tile_n], whole),
              "c": ([rows, s.tile_n // s.c_split], by_rows)}
    return {name: (block, gl.NVMMASharedLayout.get_default_for(block, gl_dtype, cga_layout=cga))
            for name, (block, cga) in blocks.items()}


def _constexprs(schedule: str, b_kmajor: bool, batched: bool = False) -> tuple:
    """(the kernel's constexpr arguments, its launch options)."""
    s = SCHEDULES[schedule]
    return ({"B_KMAJOR": b_kmajor, "STAGES": stages(schedule), "CONSUMERS": s.consumers, "SLABS": s.slabs,
             "CONSUMER_REGS": s.consumer_regs(), "BATCHED": batched},
            {"num_warps": s.warps(), "num_ctas": s.ctas, "maxnreg": s.maxnreg()})


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor = None, *, schedule: str = DEFAULT_SCHEDULE):
    """a @ b by the Gluon kernel, into out (allocated where None). a: (M, K) row-major; b: (K, N) row-major or
    the transposed view w.T of a row-major (N, K) w; bf16 or fp16, K and N multiples of 8; Hopper only. Or a batch,
    (Z, M, K) @ (Z, K, N), entries stacked or broadcast, each at least a tile (gluon_args.check_batched)."""
    return run(a, b, out, schedule)[0]


def run(a, b, out, schedule: str) -> tuple:
    """matmul's work: (out, launched), launched being (Triton's compiled kernel, grid, descriptors, the arguments
    after them) for a launch cache to repeat (tritonmm's relaunch.py), or None where nothing was launched."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
    s = SCHEDULES[schedule]
    batched = isinstance(a, torch.Tensor) and a.dim() == 3
    b_kmajor = _check_batched(a, b, out, s.tile_m, s.tile_n, BLOCK_K) if batched else _check(a, b, out)
    for name, t in (("a", a), ("b", b)) + ((("out", out), ) if out is not None else ()):
        if t.device.type != "cuda" or t.device != a.device:
            raise ValueError(f"{name} is on {t.device}; a, b and out must be on one CUDA device: use .cuda()")
    ok, reason = available(a.device)
    if not ok:
        raise RuntimeError(f"the Gluon GEMM is unavailable here: {reason}")
    Z, (M, K), N = a.shape[0] if batched else 1, a.shape[-2:], b.shape[-1]
    out = torch.empty((Z, M, N) if batched else (M, N), device=a.device, dtype=a.dtype) if out is None else out
    if M == 0 or N == 0 or Z == 0 or K == 0:  # nothing to launch: an empty result, or an empty sum's zeros
        return out if out.numel() == 0 else out.zero_(), None
    (a_block, a_layout), (b_block, b_layout), (c_block, c_layout) = _blocks(schedule, b_kmajor, a.dtype).values()
    # The real shapes (TMA zero-fills and clips past them); a size-1 dim's stride is free, so rows are given one. A
    # batch: 2-D views stacking the entries' rows (a broadcast operand's once), entry z's from z * a_rows, z * b_rows.
    row = lambda t, dim, length: t.stride(dim) if t.shape[dim] > 1 else length  # noqa: E731
    a_rows, b_rows = (M if a.stride(0) else 0, (N if b_kmajor else K) if b.stride(0) else 0) if batched else (0, 0)
    a_desc = TensorDescriptor(a, [max(Z * a_rows, M), K], [row(a, -2, K), 1], a_block, a_layout)
    b_desc = TensorDescriptor(b, [max(Z * b_rows, N), K] if b_kmajor else [max(Z * b_rows, K), N],
                              [row(b, -1, K), 1] if b_kmajor else [row(b, -2, N), 1], b_block, b_layout)
    c_desc = TensorDescriptor(out, [Z * M, N], [row(out, -2, N), 1], c_block, c_layout)
    args = (a_desc, b_desc, c_desc, M, N, K, Z, a_rows, b_rows)
    constexprs, options = _constexprs(schedule, b_kmajor, batched)
    with torch.cuda.device(a.device):
        grid = (min(_programs(schedule, b_kmajor, args, batched),
                    Z * triton.cdiv(M, s.tile_m) * triton.cdiv(N, s.tile_n)), )
        compiled = gluon_gemm_kernel[grid](*args, **constexprs, **options)
    named = dict(zip(gluon_gemm_kernel.arg_names, args), **constexprs)  # in the signature's order, as the launcher
    return out, (compiled, grid, args[:3], tuple(named[n] for n in gluon_gemm_kernel.arg_names[3:]))


_CLUSTERS = {}  # _programs' clusters that run at once, by kernel variant


def _programs(schedule: str, b_kmajor: bool, args: tuple, batched: bool = False) -> int:
    """Programs that run at once: one an SM, or for 2-CTA clusters as many as the GPCs hold (the SMs of a GPC
    pair up, so fewer than half the SMs where a GPC's count is odd). A persistent program launched past that
    would run its tiles after all the others."""
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    ctas = SCHEDULES[schedule].ctas
    if ctas == 1:
        return sms
    key = (torch.cuda.current_device(), schedule, b_kmajor, args[0].base.dtype, batched)
    if key not in _CLUSTERS:
        constexprs, options = _constexprs(schedule, b_kmajor, batched)
        kernel = gluon_gemm_kernel.warmup(*args, **constexprs, **options, grid=(1, ))
        kernel._init_handles()
        _CLUSTERS[key] = triton.runtime.driver.active.utils.cuOccupancyMaxActiveClusters(
            kernel.function, kernel.metadata.shared, ctas) or sms // ctas
    return _CLUSTERS[key]
