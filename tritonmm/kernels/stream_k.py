"""Stream-K on the TMA kernel: every SM gets the same number of K steps, wherever tiles end.

The persistent TMA kernel (gemm_tma.py) hands out whole tiles, so a product of 144 tiles on 132 SMs
runs two rounds, the second with 12 programs and 120 SMs idle: wave quantization, what keeps 1536^3
and products of 1000-1500 rows at 0.7-0.85x cuBLAS. Here the product's K steps, tile after tile
(tiles x cdiv(K, BLOCK_K)), are cut into NUM_SMS equal runs, one a program (Osama et al., "Stream-K",
PPoPP 2023). A run covers the end of one tile, whole tiles and the start of another; a tile whose steps
several programs share is finished by the program holding its last step, which adds the others' fp32
partial sums from a workspace and applies the epilogue.

Deterministic: each tile's parts are added in one order, its own sum first, then the earlier parts
latest first, and the cut depends only on the shape, the tile and NUM_SMS.

No deadlock: a program waits only for programs before it in launch order. Its order is the value it
takes from a counter (flags[NUM_SMS]) as it starts, not its program id, so every program it waits for
has started and is running, and waits on nothing later; this holds however the GPU schedules the
programs (fewer SMs under MPS, another kernel beside it, the CPU interpreter one program at a time).
Each program walks its run from the end: the part of a tile it shares with the program before it, the
tile's last steps, comes last, and the part that program shares with it comes first there, so the
wait is short.

Scratch: ``ws`` holds one BLOCK_M x BLOCK_N fp32 tile a program (at most one partial sum each: only the
first part a program walks, the start of its run read backwards, can end short of its tile's last step);
``flags`` NUM_SMS + 1 int32, zero at launch and zero again at exit: each partial's flag is cleared by the
program that adds it, and the counter by the program that takes its last value (plan.py keeps one per
stream).
"""
import triton
import triton.language as tl

from .gemm_tma import mma_steps, store_tile
from .tiles import epilogue, tile_coords


@triton.jit
def run_start(worker, per, extra):
    """The first of worker's K steps: ``per`` each, one more for the first ``extra`` workers."""
    return worker * per + tl.minimum(worker, extra)


@triton.jit
def workspace_tile(ws_ptr, worker, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """A block pointer to worker's fp32 tile of the workspace. (Offsets built once for the whole kernel
    held 128 registers a thread across the K loop: 255 registers and spills, and 0.6-0.7x the TMA kernel's
    speed in session 13's first run.)"""
    return tl.make_block_ptr(ws_ptr + worker * BLOCK_M * BLOCK_N, (BLOCK_M, BLOCK_N), (BLOCK_N, 1), (0, 0),
                             (BLOCK_M, BLOCK_N), (1, 0))


@triton.jit
def stream_k_kernel(
    a_desc, b_desc, c_desc, ws_ptr, flags_ptr, bias_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr, BIAS: tl.constexpr, ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, NUM_SMS: tl.constexpr,
):
    # The launch order (module docstring); the last to start resets the counter for the next launch.
    worker = tl.atomic_add(flags_ptr + NUM_SMS, 1)
    if worker == NUM_SMS - 1:
        tl.atomic_xchg(flags_ptr + NUM_SMS, 0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    steps = num_pid_m * num_pid_n * k_tiles
    per = steps // NUM_SMS
    extra = steps % NUM_SMS
    start = run_start(worker, per, extra)
    hi = start + per + tl.where(worker < extra, 1, 0)
    while hi > start:  # one part of a tile a pass: steps [lo, hi) of the run, from its end
        tile_id = (hi - 1) // k_tiles
        first = tile_id * k_tiles  # the tile's first step
        lo = tl.maximum(start, first)
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = mma_steps(a_desc, b_desc, tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), off_m, off_n, lo - first,
                        hi - first, BLOCK_K, A_TRANS, B_TRANS, INPUT_PRECISION, UPCAST)
        if hi - first < k_tiles:  # the tile's last steps are the next worker's: leave this part to it
            tl.store(workspace_tile(ws_ptr, worker, BLOCK_M, BLOCK_N), acc)
            tl.debug_barrier()  # every thread's part is stored before the flag says so
            tl.atomic_xchg(flags_ptr + worker, 1, sem="release")
        else:  # this worker finishes the tile: the earlier steps are the workers' before it, latest first
            w = worker
            begun = lo
            while begun > first:
                w -= 1
                while tl.atomic_cas(flags_ptr + w, 1, 1, sem="acquire") != 1:
                    pass
                acc += tl.load(workspace_tile(ws_ptr, w, BLOCK_M, BLOCK_N), cache_modifier=".cg")  # from L2, not L1
                tl.debug_barrier()  # every thread has seen the flag and read the part before it is cleared
                tl.atomic_xchg(flags_ptr + w, 0, sem="relaxed")
                begun = run_start(w, per, extra)
            offs_m = off_m + tl.arange(0, BLOCK_M)
            offs_n = off_n + tl.arange(0, BLOCK_N)
            acc = epilogue(acc, bias_ptr, scale_a_ptr, scale_b_ptr, offs_m, offs_n, M, N, stride_bias_m, stride_bias_n,
                           BIAS, ACTIVATION, SCALE_A, SCALE_B)
            store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N)
        hi = lo
