"""Stream-K on the TMA path: every SM gets an equal share of the product's K steps, not of its tiles.

A product of T tiles on G SMs runs ceil(T / G) waves, and the last one may be mostly empty:
1536^3 in 128x256 tiles is 72 tiles for 132 SMs, 3072^3 is 288 tiles, 2.18 waves run as 3.
Stream-K lays the K steps of all tiles end to end (tile after tile, each tile's steps in order)
and hands each of the G programs one contiguous range of ceil(T * k_tiles / G) of them, so every
SM works for the same time. A range starts and ends inside tiles: a program sums the pieces of
the tiles it touches, and a tile split between programs is finished by its owner, the program
holding its first K step.

Fix-up, deterministic: a program whose range starts inside a tile (a later piece; only a range's
first piece can be one) stores that piece's fp32 sum in its slot of the workspace, ws[p], and
sets flags[p]. The owner reaches the tile at the end of its range, then waits for each later
piece's flag in program order, adds the pieces in that order (the same order every call: no
atomics on C) and resets the flags it consumed, so the buffer is zero again after every launch
(plan.py keeps one per device and stream). The owner adds pieces computed at the *start* of
later programs' ranges, so it rarely waits.

The programs are numbered backwards (p = G - 1 - program_id): an owner waits only on programs of
higher p, which have lower program ids. The GPU dispatches blocks in program-id order, so the
programs waited on were started first and never wait for a block that cannot be scheduled (with
fewer free SMs than G, the owner's SM is not all that is left); Triton's CPU interpreter runs
programs one after another in program-id order, where the pieces are always ready too.
"""
import triton
import triton.language as tl

from .gemm_tma import k_step, k_steps, store_tile
from .tiles import tile_coords


@triton.jit
def _slot(ws_ptr, program, half, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Pointers to one BLOCK_N / 2 wide half of a program's tile-sized slot of the workspace."""
    offs = tl.arange(0, BLOCK_M)[:, None] * (BLOCK_N // 2) + tl.arange(0, BLOCK_N // 2)[None, :]
    return ws_ptr + (2 * program + half) * (BLOCK_M * BLOCK_N // 2) + offs


@triton.jit
def gemm_stream_k_kernel(
    a_desc, b_desc, c_desc, bias_ptr, scale_a_ptr, scale_b_ptr, ws_ptr, flags_ptr, M, N, K,
    stride_bias_m, stride_bias_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    A_TRANS: tl.constexpr, B_TRANS: tl.constexpr, BIAS: tl.constexpr, ACTIVATION: tl.constexpr,
    SCALE_A: tl.constexpr, SCALE_B: tl.constexpr,
    INPUT_PRECISION: tl.constexpr, UPCAST: tl.constexpr, NUM_SMS: tl.constexpr, PRESPLIT: tl.constexpr,
):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    total = num_pid_m * num_pid_n * k_tiles
    share = tl.cdiv(total, NUM_SMS)
    p = NUM_SMS - 1 - tl.program_id(0)
    start = p * share  # this program's K steps: [p * share, (p + 1) * share), clipped to total
    end = tl.minimum(start + share, total)
    first_tile = start // k_tiles
    if (start < end) & (first_tile * k_tiles < start):
        # The range starts inside a tile that earlier steps began: its piece goes to the tile's
        # owner, a program of lower p, through this program's slot and flag.
        step = tl.minimum(end, (first_tile + 1) * k_tiles)
        pid_m, pid_n = tile_coords(first_tile, num_pid_m, num_pid_n, GROUP_M)
        acc = k_steps(tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32), a_desc, b_desc, pid_m * BLOCK_M,
                      pid_n * BLOCK_N, start - first_tile * k_tiles, step - first_tile * k_tiles, M, N, BLOCK_K,
                      A_TRANS, B_TRANS, INPUT_PRECISION, UPCAST, PRESPLIT)
        left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
        tl.store(_slot(ws_ptr, p, 0, BLOCK_M, BLOCK_N), left, cache_modifier=".cg")
        tl.store(_slot(ws_ptr, p, 1, BLOCK_M, BLOCK_N), right, cache_modifier=".cg")
        tl.debug_barrier()  # every thread's part of the piece is written before the flag says so
        tl.atomic_xchg(flags_ptr + p, 1, sem="release")
        start = step
    # Then whole tiles, and last the first piece of a tile that goes on past the range, whose owner
    # this program is. One loop over them, not one per tile, so that the pipeliner prefetches the
    # next tile's first K steps while this one finishes (a loop per piece refilled the pipeline at
    # every piece, and ran 0.7-0.9x the data-parallel kernel; session 6, run 1). It holds no
    # barrier, which stops the pipeliner: the owner's wait comes after it.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(start, end):
        tile_id = step // k_tiles
        ki = step - tile_id * k_tiles
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = k_step(acc, a_desc, b_desc, pid_m * BLOCK_M, pid_n * BLOCK_N, ki * BLOCK_K, M, N, A_TRANS, B_TRANS,
                     INPUT_PRECISION, UPCAST, PRESPLIT)
        if ki == k_tiles - 1:
            store_tile(acc, c_desc, bias_ptr, scale_a_ptr, scale_b_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N, M, N,
                       stride_bias_m, stride_bias_n, BLOCK_M, BLOCK_N, BIAS, ACTIVATION, SCALE_A, SCALE_B)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    last_tile = (end - 1) // k_tiles
    done = end - last_tile * k_tiles  # K steps of the last tile summed here
    if (start < end) & (done < k_tiles):
        # The owner of a tile that later programs finish: their pieces, added in program order.
        q = p + 1
        while done < k_tiles:
            while tl.atomic_cas(flags_ptr + q, 1, 0, sem="acquire") != 1:  # takes the flag, resets it
                pass
            tl.debug_barrier()
            left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
            left += tl.load(_slot(ws_ptr, q, 0, BLOCK_M, BLOCK_N), cache_modifier=".cg")
            right += tl.load(_slot(ws_ptr, q, 1, BLOCK_M, BLOCK_N), cache_modifier=".cg")
            acc = tl.join(left, right).permute(0, 2, 1).reshape(BLOCK_M, BLOCK_N)
            done = (q + 1) * share - last_tile * k_tiles  # program q's range ends there (or past the tile)
            q += 1
        pid_m, pid_n = tile_coords(last_tile, num_pid_m, num_pid_n, GROUP_M)
        store_tile(acc, c_desc, bias_ptr, scale_a_ptr, scale_b_ptr, pid_m * BLOCK_M, pid_n * BLOCK_N, M, N,
                   stride_bias_m, stride_bias_n, BLOCK_M, BLOCK_N, BIAS, ACTIVATION, SCALE_A, SCALE_B)
