"""A CPU emulation of the index math of steps 10 to 17, to check it without a GPU:

    python3 -m cuda_reference.emulate

It transcribes the kernels' staging of slices into padded shared memory (zero fill past
the edges; 16-byte chunks, or guarded element loads for unaligned rows), the ldmatrix row
addresses of MmaWarpTile::multiply, the pipeline's buffer rotation, the grouped block
order and the epilogue's store2, and executes ldmatrix(.trans) and mma.m16n8k16 the way
the PTX ISA defines their fragment layouts (written here from the ISA's formulas, not from
the kernels). Shared memory starts as NaN, so reading anything never staged shows up in C;
inputs are small integers, so every product is exact and compared with ==. It checks a
transcription, not the compiled kernels: keep it in step with mma.cuh, 10_mma_sync.cu and
11_cp_async.cu. Warps run one after another; only index math is checked, not races
(compute-sanitizer's racecheck does that on a GPU: see sanitize.py).

Step 12 (12_wgmma.cu, wgmma.cuh) has no ldmatrix: the tensor cores read shared memory
through descriptors. Its emulation packs the descriptors as wgmma_desc does, unpacks them
and turns them into byte addresses with the canonical layouts the PTX ISA (and CUTLASS's
make_gmma_desc) define for the 128-byte swizzle, K-major A and MN-major (transposed) B,
then applies the swizzle to the absolute address, as the hardware does. So it checks that
the cp.async copies put every element where the descriptors say it is, that the ring never
refills a buffer a wgmma may still read, and that the stores cover C once; it cannot check
that reading of the hardware itself, only a GPU can.

Steps 13 to 15 (tma.cuh) fill the same layout with TMA boxes: tma_box_offsets writes the
boxes with the 128-byte swizzle as the driver API defines it, and check_tma_layout finds
step 12's layout, hence step 12's descriptors. tma_kernel replays their data flow (boxes
wholly outside the matrix skipped, leaving stale NaN behind; partial boxes zero-filled;
step 15's persistent walk of pair tiles in grouped order) and tma_protocol their mbarrier
protocols (full / empty barriers, phase parities, step 15's multicast and releases in both
CTAs, the closing cluster barrier) under random interleavings of every agent and every
asynchronous completion, as the PTX ISA defines mbarrier phases. Again a transcription:
keep it in step with 13_tma.cu, 14_warp_specialized.cu and 15_persistent.cu.

Step 16 (16_tma_store.cu, tma_store.cuh) adds the epilogue through shared memory:
tma_store_epilogue writes each thread's pairs of results where the kernel's index math puts
them and reads every 64 x 64 box back the way a TMA store with the 128-byte swizzle does (the
driver API's definition, on absolute addresses), clipped at M and N; tma_protocol runs its
staging boxes and bulk async-groups (wait_group.read before a box is rewritten, wait_group
before the CTA may exit) among the other agents and events. Step 17 (17_warptile_tuned.cu) is
fp32: warptile_tuned_kernel replays its fetch, transposed stash, double-buffer rotation,
interleaved float4 reads and stores for every config; check_warptile_tuned_banks counts its
shared-memory bank conflicts.
"""
import itertools

import torch

LANES = torch.arange(32)
G, T = LANES // 4, LANES % 4  # groupID and threadID_in_group of each lane

# (BM, BN, BK, WM, WN, STAGES) of 11_cp_async.cu's launchers
CP_ASYNC_CONFIGS = [(128, 256, 64, 64, 64, 3), (128, 256, 32, 64, 64, 4), (128, 128, 32, 64, 64, 4)]
# (130, 264, 520): 9 slices of 64 through step 12's 4 buffers (and 17 of 32 through step
# 11's), so the ring wraps around and every buffer is refilled: the refill rule is checked.
SHAPES = [(1, 1, 1), (7, 13, 5), (33, 65, 31), (130, 264, 72), (130, 67, 200), (256, 512, 128), (300, 4, 101),
          (130, 264, 520)]
GROUP_M = 8
# Steps 13 to 15 take K and N multiples of 8 only; these add pair tiles half below M (step 15)
# and more tiles than clusters.
TMA_SHAPES = [(1, 8, 8), (300, 136, 72), (520, 264, 40)]


def grouped_block_origin(bid, tilesM, tilesN):
    """mma.cuh's grouped_block_origin, in tiles: (block-row, block-column) of block `bid`."""
    perGroup = GROUP_M * tilesN
    firstM = (bid // perGroup) * GROUP_M
    groupRows = min(tilesM - firstM, GROUP_M)
    inGroup = bid % perGroup
    return firstM + inGroup % groupRows, inGroup // groupRows


def ldmatrix_x4(smem, addrs, trans):
    """Lanes 8m..8m+7 give the row addresses of 8 x 8 matrix m; register m of lane (g, t) gets
    row g, elements 2t and 2t+1 of it (.trans: elements [2t][g] and [2t+1][g]).
    Returns (32 lanes, 4 registers, 2 halves: low, high)."""
    assert bool((addrs % 8 == 0).all()), "ldmatrix rows must be 16-byte aligned"
    mats = smem[addrs.view(4, 8, 1) + torch.arange(8)]  # (matrix, row, element)
    if trans:
        lo, hi = mats[:, 2 * T, G], mats[:, 2 * T + 1, G]
    else:
        lo, hi = mats[:, G, 2 * T], mats[:, G, 2 * T + 1]
    return torch.stack([lo, hi], -1).transpose(0, 1)  # (matrix, lane, half) -> (lane, register, half)


def _fragment_index(rows, cols, width):
    """Flat index row * width + col of each (lane, register, half) of a fragment."""
    return torch.stack([torch.stack([r * width + c for r, c in zip(rr, cc)], -1) for rr, cc in zip(rows, cols)], 1)


# The PTX ISA's fragment layouts of mma.m16n8k16 (f16 / bf16 inputs, f32 accumulators), as
# flat indices into the 16 x 16 A, the 16 x 8 B and the 16 x 8 C, per (lane, register, half):
#   A: a0..a7 in 4 registers; row g for a0, a1, a4, a5, else g + 8; col 2t + (i & 1), + 8 for i >= 4
#   B: b0..b3 in 2 registers; row 2t + (i & 1), + 8 for i >= 2; col g
#   C: c0..c3, one fp32 each; row g for c0, c1, else g + 8; col 2t + (i & 1)
A_INDEX = _fragment_index([(G, G), (G + 8, G + 8), (G, G), (G + 8, G + 8)],
                          [(2 * T, 2 * T + 1), (2 * T, 2 * T + 1), (2 * T + 8, 2 * T + 9), (2 * T + 8, 2 * T + 9)], 16)
B_INDEX = _fragment_index([(2 * T, 2 * T + 1), (2 * T + 8, 2 * T + 9)], [(G, G), (G, G)], 8)
C_INDEX = torch.stack([G * 8 + 2 * T, G * 8 + 2 * T + 1, (G + 8) * 8 + 2 * T, (G + 8) * 8 + 2 * T + 1], 1)


def mma_16816(acc, a, b):
    """acc (MI, NI, 32, 4) += a[i] (32, 4, 2) x b[j] (32, 2, 2) for every i, j: MI x NI mma.sync,
    every operand in the fragment layouts above."""
    MI, NI = acc.shape[:2]
    A = torch.zeros(MI, 256, dtype=torch.float64)
    A[:, A_INDEX.flatten()] = torch.stack(a).reshape(MI, -1)
    B = torch.zeros(NI, 128, dtype=torch.float64)
    B[:, B_INDEX.flatten()] = torch.stack(b).reshape(NI, -1)
    C = torch.zeros(MI, NI, 128, dtype=torch.float64)
    C[:, :, C_INDEX.flatten()] = acc.reshape(MI, NI, -1)
    D = A.view(MI, 1, 16, 16) @ B.view(1, NI, 16, 8) + C.view(MI, NI, 16, 8)
    return D.reshape(MI, NI, 128)[:, :, C_INDEX.flatten()].reshape(MI, NI, 32, 4)


class WarpTile:
    """MmaWarpTile (mma.cuh)."""

    def __init__(self, WM, WN):
        self.MI, self.NI = WM // 16, WN // 8
        self.acc = torch.zeros(self.MI, self.NI, 32, 4, dtype=torch.float64)

    def multiply(self, BK, smem, As, lda, Bs, ldb):
        r, c = LANES % 16, (LANES // 16) * 8
        for kk in range(0, BK, 16):
            a = [ldmatrix_x4(smem, As + (i * 16 + r) * lda + kk + c, False) for i in range(self.MI)]
            b = [None] * self.NI
            for j in range(0, self.NI, 2):
                q = ldmatrix_x4(smem, Bs + (kk + r) * ldb + j * 8 + c, True)
                b[j], b[j + 1] = q[:, 0:2], q[:, 2:4]
            self.acc = mma_16816(self.acc, a, b)

    def store(self, C, M, N, row0, col0, written):
        """store2 for every (i, j, lane): c0, c1 to (row, col) and (row, col + 1), c2, c3 eight
        rows down; whatever lies outside M x N is dropped."""
        i, j, lane, e = torch.meshgrid(torch.arange(self.MI), torch.arange(self.NI), LANES, torch.arange(4),
                                       indexing="ij")
        row = row0 + i * 16 + G[lane] + 8 * (e // 2)
        col = col0 + j * 8 + 2 * T[lane] + e % 2
        inside = (row < M) & (col < N)
        C[row[inside], col[inside]] = self.acc[inside]
        written.index_put_((row[inside], col[inside]), torch.ones_like(row[inside]), accumulate=True)


def load8(mat, row, col):
    """fp16.cuh's load8 on its guarded path: 8 elements, zero outside."""
    rows, cols = mat.shape
    out = torch.zeros(8, dtype=torch.float64)
    if row < rows and col < cols:
        n = min(8, cols - col)
        out[:n] = mat[row, col:col + n]
    return out


def cp_async_chunk(mat, row, col):
    """One cp_async16 of the aligned path: the chunk lies wholly inside (16 bytes copied) or
    wholly outside (src-size 0, zero fill); rows are whole chunks since cols % 8 == 0."""
    rows, cols = mat.shape
    assert cols % 8 == 0 and col % 8 == 0
    return mat[row, col:col + 8].clone() if row < rows and col < cols else torch.zeros(8, dtype=torch.float64)


def cp_async_kernel(Am, Bm, BM, BN, BK, WM, WN, STAGES, vec):
    """11_cp_async.cu. vec: take the cp.async path wherever the rows allow it."""
    M, K = Am.shape
    N = Bm.shape[1]
    THREADS = (BM // WM) * (BN // WN) * 32
    LDA, LDB = BK + 8, BN + 8
    A_STAGE, B_STAGE = BM * LDA, BK * LDB
    A_LOADS, B_LOADS = BM * BK // 8 // THREADS, BK * BN // 8 // THREADS
    assert A_LOADS * 8 * THREADS == BM * BK and B_LOADS * 8 * THREADS == BK * BN
    vecA, vecB = vec and K % 8 == 0, vec and N % 8 == 0
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    written = torch.zeros(M, N, dtype=torch.int64)
    tilesM, tilesN = -(-M // BM), -(-N // BN)
    for bid in range(tilesM * tilesN):
        tm, tn = grouped_block_origin(bid, tilesM, tilesN)
        rowBase, colBase = tm * BM, tn * BN
        smem = torch.full((STAGES * (A_STAGE + B_STAGE),), float("nan"), dtype=torch.float64)
        As, Bs = 0, STAGES * A_STAGE

        def load_slice(stage, kt):
            k0 = kt * BK
            for tid in range(THREADS):
                for i in range(A_LOADS):
                    idx = tid + i * THREADS
                    r, c = idx // (BK // 8), (idx % (BK // 8)) * 8
                    dst = As + stage * A_STAGE + r * LDA + c
                    smem[dst:dst + 8] = (cp_async_chunk if vecA else load8)(Am, rowBase + r, k0 + c)
                for i in range(B_LOADS):
                    idx = tid + i * THREADS
                    r, c = idx // (BN // 8), (idx % (BN // 8)) * 8
                    dst = Bs + stage * B_STAGE + r * LDB + c
                    smem[dst:dst + 8] = (cp_async_chunk if vecB else load8)(Bm, k0 + r, colBase + c)

        tiles = [WarpTile(WM, WN) for _ in range(THREADS // 32)]
        KT = -(-K // BK)
        for s in range(STAGES - 1):
            if s < KT:
                load_slice(s, s)
        for kt in range(KT):
            nxt = kt + STAGES - 1
            if nxt < KT:
                assert nxt % STAGES != kt % STAGES, "refilling the buffer being multiplied"
                load_slice(nxt % STAGES, nxt)
            stage = kt % STAGES
            for warp, tile in enumerate(tiles):
                warpRow, warpCol = warp // (BN // WN), warp % (BN // WN)
                tile.multiply(BK, smem, As + stage * A_STAGE + warpRow * WM * LDA, LDA,
                              Bs + stage * B_STAGE + warpCol * WN, LDB)
        for warp, tile in enumerate(tiles):
            warpRow, warpCol = warp // (BN // WN), warp % (BN // WN)
            tile.store(C, M, N, rowBase + warpRow * WM, colBase + warpCol * WN, written)
    return C, written


def mma_sync_kernel(Am, Bm, BM=128, BN=128, BK=32, WM=64, WN=32):
    """10_mma_sync.cu: register staging, one slice at a time."""
    M, K = Am.shape
    N = Bm.shape[1]
    THREADS = (BM // WM) * (BN // WN) * 32
    LDA, LDB = BK + 8, BN + 8
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    written = torch.zeros(M, N, dtype=torch.int64)
    for by, bx in itertools.product(range(-(-M // BM)), range(-(-N // BN))):
        rowBase, colBase = by * BM, bx * BN
        tiles = [WarpTile(WM, WN) for _ in range(THREADS // 32)]
        for k0 in range(0, K, BK):
            smem = torch.full((BM * LDA + BK * LDB,), float("nan"), dtype=torch.float64)
            for tid in range(THREADS):
                for i in range(BM * BK // 8 // THREADS):
                    idx = tid + i * THREADS
                    r, c = idx // (BK // 8), (idx % (BK // 8)) * 8
                    smem[r * LDA + c:r * LDA + c + 8] = load8(Am, rowBase + r, k0 + c)
                for i in range(BK * BN // 8 // THREADS):
                    idx = tid + i * THREADS
                    r, c = idx // (BN // 8), (idx % (BN // 8)) * 8
                    o = BM * LDA + r * LDB + c
                    smem[o:o + 8] = load8(Bm, k0 + r, colBase + c)
            for warp, tile in enumerate(tiles):
                warpRow, warpCol = warp // (BN // WN), warp % (BN // WN)
                tile.multiply(BK, smem, warpRow * WM * LDA, LDA, BM * LDA + warpCol * WN, LDB)
        for warp, tile in enumerate(tiles):
            warpRow, warpCol = warp // (BN // WN), warp % (BN // WN)
            tile.store(C, M, N, rowBase + warpRow * WM, colBase + warpCol * WN, written)
    return C, written


# ---- step 12: wgmma ----------------------------------------------------------------------
WGMMA_TILE = (128, 256, 64, 4)  # BM, BN, BK, STAGES of 12_wgmma.cu's launcher
WGMMA_AHEAD = WGMMA_TILE[3] - 2  # AHEAD: slices copied ahead of the one multiplied
WGMMA_THREADS = 256


def swizzle128(row, chunk):
    """wgmma.cuh's swizzle128: byte offset of 16-byte chunk `chunk` of 128-byte row `row`."""
    return row * 128 + ((chunk ^ (row & 7)) << 4)


def swizzle_address(addr):
    """The 128-byte swizzle on an absolute shared address: bits 4-6 XOR bits 7-9."""
    return addr ^ (((addr >> 7) & 7) << 4)


def wgmma_desc(addr, lbo, sbo):
    """wgmma.cuh's wgmma_desc."""
    return ((addr & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32) | (1 << 62)


def unpack_desc(desc):
    """(start address, LBO, SBO, swizzle mode) in bytes, as the hardware reads the 64 bits."""
    assert (desc >> 49) & 7 == 0, "base offset: the tiles are 1024-byte aligned"
    return ((desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4, desc >> 62)


def operand_addresses(desc, major, rows, cols):
    """Byte address of every element of a 16-bit wgmma operand with the 128-byte swizzle.
    K-major (A: rows = M = 64, cols = K = 16): element (m, k) at
        start + (m // 8) * SBO + (m % 8) * 128 + 2k  (LBO unused: the 16 k lie in one row)
    MN-major (B: rows = K = 16, cols = N): element (k, n) at
        start + (n // 64) * LBO + (k // 8) * SBO + (k % 8) * 128 + 2 (n % 64)
    (PTX ISA, "Shared Memory Matrix Layout"; cute's make_gmma_desc: ((8,m),(T,2)):((8T,SBO),(1,T))
    for K-major and ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)) for MN-major, in 16-byte units T),
    then swizzled on the absolute address."""
    start, lbo, sbo, mode = unpack_desc(desc)
    assert mode == 1, "128-byte swizzle"
    r, c = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
    if major == "K":
        assert start % 128 + 2 * cols <= 128, "a k16 step stays inside one 128-byte row"
        logical = start + (r // 8) * sbo + (r % 8) * 128 + 2 * c
    else:
        logical = start + (c // 64) * lbo + (r // 8) * sbo + (r % 8) * 128 + 2 * (c % 64)
    return swizzle_address(logical)


def wgmma_stage_offsets():
    """Where load_slice puts each element of a slice, in bytes from the stage's start:
    (A's BM x BK, B's BK x BN), from the chunk each thread copies (16 bytes, 8 elements)."""
    BM, BN, BK, _ = WGMMA_TILE
    a = torch.full((BM, BK), -1, dtype=torch.int64)
    for idx in range(BM * BK // 8):  # idx = threadIdx.x + i * THREADS covers 0 .. BM*BK/8 - 1 once
        r, c = idx // 8, idx % 8
        a[r, 8 * c:8 * c + 8] = swizzle128(r, c) + 2 * torch.arange(8)
    b = torch.full((BK, BN), -1, dtype=torch.int64)
    for idx in range(BK * BN // 8):
        r, c = idx // 32, idx % 32
        b[r, 8 * c:8 * c + 8] = BM * BK * 2 + (c // 8) * (BK * 128) + swizzle128(r, c % 8) + 2 * torch.arange(8)
    return a, b


def wgmma_descriptors(ring, stage, wg, s):
    """12_wgmma.cu's descriptors for warpgroup wg, k16 step s of the slice in buffer `stage`."""
    BM, BN, BK, _ = WGMMA_TILE
    stage_bytes = (BM * BK + BK * BN) * 2
    a_s = ring + stage * stage_bytes
    b_s = a_s + BM * BK * 2
    return wgmma_desc(a_s + wg * 64 * 128 + s * 32, 16, 1024), wgmma_desc(b_s + s * 16 * 128, BK * 128, 1024)


def check_wgmma_layout(raw=0x410):
    """Every element a descriptor names is where the copies put it: for each warpgroup, k16
    step and stage, the K-major addresses of A's 64 x 16 and the MN-major ones of B's 16 x 256
    equal the swizzled offsets load_slice writes (the ring starting at `raw`, aligned up)."""
    BM, BN, BK, STAGES = WGMMA_TILE
    ring = raw + (1024 - raw % 1024) % 1024
    a_off, b_off = wgmma_stage_offsets()
    stage_bytes = (BM * BK + BK * BN) * 2
    # the copies fill each stage exactly once, 2-byte aligned, inside the stage
    both = torch.cat([a_off.flatten(), b_off.flatten()])
    assert bool((both >= 0).all()) and len(set(both.tolist())) == both.numel() and int(both.max()) < stage_bytes
    for stage in range(STAGES):
        base = ring + stage * stage_bytes
        for wg in range(2):
            for s in range(BK // 16):
                da, db = wgmma_descriptors(ring, stage, wg, s)
                want_a = base + a_off[wg * 64:wg * 64 + 64, 16 * s:16 * s + 16]
                want_b = base + b_off[16 * s:16 * s + 16, :]
                assert torch.equal(operand_addresses(da, "K", 64, 16), want_a), ("A", stage, wg, s)
                assert torch.equal(operand_addresses(db, "MN", 16, BN), want_b), ("B", stage, wg, s)


def wgmma_kernel(Am, Bm, vec, raw=0x410):
    """12_wgmma.cu: copies to swizzled places, descriptors, the ring, the stores."""
    M, K = Am.shape
    N = Bm.shape[1]
    BM, BN, BK, STAGES = WGMMA_TILE
    AHEAD = WGMMA_AHEAD
    vecA, vecB = vec and K % 8 == 0, vec and N % 8 == 0
    a_off, b_off = wgmma_stage_offsets()
    stage_bytes = (BM * BK + BK * BN) * 2
    ring = raw + (1024 - raw % 1024) % 1024
    assert ring % 1024 == 0 and ring - raw < 1024
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    written = torch.zeros(M, N, dtype=torch.int64)
    tilesM, tilesN = -(-M // BM), -(-N // BN)
    KT = -(-K // BK)
    lane = torch.arange(128) % 32
    warp = torch.arange(128) // 32
    g, t = lane // 4, lane % 4
    for bid in range(tilesM * tilesN):
        tm, tn = grouped_block_origin(bid, tilesM, tilesN)
        rowBase, colBase = tm * BM, tn * BN
        smem = torch.full(((ring + STAGES * stage_bytes) // 2,), float("nan"), dtype=torch.float64)

        def load_slice(stage, kt):
            k0 = kt * BK
            for mat, off, r0, c0, vec_ in ((Am, a_off, rowBase, k0, vecA), (Bm, b_off, k0, colBase, vecB)):
                rows, cols = off.shape
                vals = torch.zeros(rows, cols, dtype=torch.float64)  # zero outside the matrix
                rr, cc = min(rows, mat.shape[0] - r0), min(cols, mat.shape[1] - c0)
                if rr > 0 and cc > 0:
                    vals[:rr, :cc] = mat[r0:r0 + rr, c0:c0 + cc]
                if vec_:  # cp.async: each 8-element chunk wholly inside or wholly outside
                    assert mat.shape[1] % 8 == 0 and c0 % 8 == 0
                smem[(ring + stage * stage_bytes + off) // 2] = vals

        acc = torch.zeros(2, 64, BN, dtype=torch.float64)
        for s in range(AHEAD):
            if s < KT:
                load_slice(s, s)
        for kt in range(KT):
            stage = kt % STAGES
            for wg in range(2):
                for s in range(BK // 16):
                    da, db = wgmma_descriptors(ring, stage, wg, s)
                    a = smem[operand_addresses(da, "K", 64, 16) // 2]
                    b = smem[operand_addresses(db, "MN", 16, BN) // 2]
                    acc[wg] += a @ b
            nxt = kt + AHEAD
            if nxt < KT:
                # in flight now: the products of kt-1 (if any) and kt, the copies of kt+1 .. kt+AHEAD-1
                busy = {i % STAGES for i in range(max(kt - 1, 0), nxt)}
                assert nxt % STAGES not in busy, ("refilling a buffer still in use", kt)
                load_slice(nxt % STAGES, nxt)
        for wg in range(2):
            # d[4j + e] of thread 32w + 4g + t: row 16w + g + 8 (e // 2), column 8j + 2t + e % 2
            j, e = torch.meshgrid(torch.arange(32), torch.arange(4), indexing="ij")
            lr = (16 * warp + g).view(-1, 1, 1) + 8 * (e // 2)
            lc = (2 * t).view(-1, 1, 1) + 8 * j + e % 2
            d = acc[wg][lr, lc]  # (thread, j, e): the registers
            # the kernel's store: row = rowBase + 64 wg + 16 w + g (+ 8), col = colBase + 8j + 2t (+ 1)
            row = rowBase + 64 * wg + lr
            col = colBase + lc
            inside = (row < M) & (col < N)
            C[row[inside], col[inside]] = d[inside]
            written.index_put_((row[inside], col[inside]), torch.ones_like(row[inside]), accumulate=True)
    return C, written


# ---- steps 13 to 15: TMA into the same layout, the mbarrier ring -------------------------
# The stage of 13_tma.cu, 14_warp_specialized.cu and 15_persistent.cu (tma.cuh): step 12's
# 48 KiB, written by the TMA in boxes: A's 64 x 128 box and B's four 64 x 64 boxes.
TMA_STAGES = 4
TMA_A_BYTES, TMA_B_BOX_BYTES = 128 * 64 * 2, 64 * 64 * 2
TMA_STAGE_BYTES = TMA_A_BYTES + 4 * TMA_B_BOX_BYTES
TMA_GROUP = 8  # GROUP_M of steps 13, 14 (block rows) and GROUP of steps 15, 16 (pair rows)
PERSISTENT = ("persistent", "tma_store")  # steps 15 and 16: persistent 2-CTA clusters, B multicast
# Step 16's staging for C (tma_store.cuh, 16_tma_store.cu): 64 x 64 boxes of 8 KiB, CBUF of them
# per consumer warpgroup: 2 beside a ring of 4 stages, 4 beside a ring of 3.
TMA_C_BOX_BYTES = 64 * 64 * 2


def tma_store_cbuf(stages):
    """TmaStoreLayout<STAGES>::CBUF."""
    return 2 if stages >= 4 else 4


def tma_box_offsets():
    """Where the TMA puts each element of a stage, in bytes from the stage's (1024-byte
    aligned) start: (A's 128 x 64, B's 64 x 256). A box whose rows are 128 bytes lands row r at
    box + 128 r, and CU_TENSOR_MAP_SWIZZLE_128B permutes the 16-byte chunks of each 128-byte
    row by the row's index mod 8, i.e. XORs address bits 4-6 with bits 7-9 (written here from
    the driver API's definition of the swizzle, not from the kernels). A: one box, element
    (m, k) at 128 m + 2 k; B: box j holds columns 64j .. 64j + 63 at TMA_A_BYTES + j * 8 KiB."""
    r, c = torch.meshgrid(torch.arange(128), torch.arange(64), indexing="ij")
    a = swizzle_address(128 * r + 2 * c)
    b = torch.empty(64, 256, dtype=torch.int64)
    r, c = torch.meshgrid(torch.arange(64), torch.arange(64), indexing="ij")
    for j in range(4):
        b[:, 64 * j:64 * j + 64] = swizzle_address(TMA_A_BYTES + j * TMA_B_BOX_BYTES + 128 * r + 2 * c)
    return a, b


def check_tma_layout(raw=0x410):
    """The TMA's boxes land every element where step 12's copies put it, so the descriptors of
    steps 13 to 15 (wgmma_slice in tma.cuh: step 12's, on a stage of the same size) name it."""
    a_off, b_off = tma_box_offsets()
    a12, b12 = wgmma_stage_offsets()
    assert TMA_STAGE_BYTES == (WGMMA_TILE[0] * WGMMA_TILE[2] + WGMMA_TILE[2] * WGMMA_TILE[1]) * 2
    assert torch.equal(a_off, a12) and torch.equal(b_off, b12)
    ring = raw + (1024 - raw % 1024) % 1024
    for stage in range(TMA_STAGES):
        base = ring + stage * TMA_STAGE_BYTES
        for wg in range(2):
            for s in range(4):
                da, db = wgmma_descriptors(ring, stage, wg, s)
                assert torch.equal(operand_addresses(da, "K", 64, 16), base + a_off[wg * 64:wg * 64 + 64, 16 * s:16 * s + 16])
                assert torch.equal(operand_addresses(db, "MN", 16, 256), base + b_off[16 * s:16 * s + 16, :])


def grouped_tile(t, tilesM, tilesN, group):
    """15_persistent.cu's grouped_tile: (row, column) of pair tile t, in tiles."""
    perGroup = group * tilesN
    firstM = (t // perGroup) * group
    groupRows = min(tilesM - firstM, group)
    inGroup = t % perGroup
    return firstM + inGroup % groupRows, inGroup // groupRows


def tma_walks(kernel, M, N, clusters=None):
    """The (row0, col0) tiles each CTA computes, in order: {cta: [...]}, cta = (cluster, rank)
    for steps 15 and 16 (`clusters` clusters, default: as many as there are pair tiles), block
    id else."""
    tilesM, tilesN = -(-M // 128), -(-N // 256)
    if kernel not in PERSISTENT:
        walks = {}
        for bid in range(tilesM * tilesN):
            tm, tn = grouped_block_origin(bid, tilesM, tilesN)  # GROUP_M 8 as TMA_GROUP
            walks[bid] = [(tm * 128, tn * 256)]
        return walks
    pairRows = -(-tilesM // 2)
    tiles = pairRows * tilesN
    clusters = min(clusters or tiles, tiles)
    walks = {}
    for cl in range(clusters):
        for rank in range(2):
            walks[(cl, rank)] = [((pm * 2 + rank) * 128, pn * 256)
                                 for pm, pn in (grouped_tile(t, pairRows, tilesN, TMA_GROUP)
                                                for t in range(cl, tiles, clusters))]
    return walks


def tma_stage_bytes(row0, col0, M, N):
    """tma.cuh's tma_stage_bytes: A's box unless wholly below M, each B box starting left of N."""
    return (TMA_A_BYTES if row0 < M else 0) + sum(TMA_B_BOX_BYTES for j in range(4) if col0 + 64 * j < N)


def tma_kernel(Am, Bm, kernel, clusters=None, raw=0x410, stages=TMA_STAGES, aligned_c=True):
    """Steps 13 to 16's data: per CTA, each slice's boxes into the stage of its ring slot (a box
    wholly outside the matrix is skipped, so its part of the stage keeps whatever was there:
    NaN at first, then older slices; partial boxes are zero-filled), the products through the
    descriptors, the stores of each warpgroup: from registers (steps 13-15, and step 16 when C
    is not 16-byte aligned) or, for step 16, through its staging boxes (tma_store_epilogue).
    Which thread issues what, and when, is the business of tma_protocol."""
    M, K = Am.shape
    N = Bm.shape[1]
    a_off, b_off = tma_box_offsets()
    ring = raw + (1024 - raw % 1024) % 1024
    staged = kernel == "tma_store" and aligned_c
    cbuf = tma_store_cbuf(stages)
    staging = ring + stages * TMA_STAGE_BYTES  # step 16: the staging boxes follow the ring
    end = staging + (2 * cbuf * TMA_C_BOX_BYTES if staged else 0)
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    written = torch.zeros(M, N, dtype=torch.int64)
    KT = -(-K // 64)
    lane = torch.arange(128) % 32
    warp = torch.arange(128) // 32
    g, t = lane // 4, lane % 4

    def box(mat, r0, c0, rows, cols):
        vals = torch.zeros(rows, cols, dtype=torch.float64)  # the TMA's zero fill
        rr, cc = min(rows, mat.shape[0] - r0), min(cols, mat.shape[1] - c0)
        if rr > 0 and cc > 0:
            vals[:rr, :cc] = mat[r0:r0 + rr, c0:c0 + cc]
        return vals

    for cta, walk in tma_walks(kernel, M, N, clusters).items():
        smem = torch.full((end // 2,), float("nan"), dtype=torch.float64)
        it = 0  # the ring runs on across a CTA's tiles
        for row0, col0 in walk:
            acc = torch.zeros(2, 64, 256, dtype=torch.float64)
            for kt in range(KT):
                stage = it % stages
                base = ring + stage * TMA_STAGE_BYTES
                k0 = kt * 64
                if row0 < M:
                    smem[(base + a_off) // 2] = box(Am, row0, k0, 128, 64)
                for j in range(4):
                    if col0 + 64 * j < N:
                        smem[(base + b_off[:, 64 * j:64 * j + 64]) // 2] = box(Bm, k0, col0 + 64 * j, 64, 64)
                for wg in range(2):
                    for s in range(4):
                        da, db = wgmma_descriptors(ring, stage, wg, s)
                        acc[wg] += smem[operand_addresses(da, "K", 64, 16) // 2] @ smem[operand_addresses(db, "MN", 16, 256) // 2]
                it += 1
            if staged:
                for wg in range(2):
                    tma_store_epilogue(smem, staging + wg * cbuf * TMA_C_BOX_BYTES, cbuf, acc[wg], row0 + 64 * wg,
                                       col0, C, written)
                continue
            for wg in range(2):  # tma.cuh's store_wgmma_tile at (row0 + 64 wg, col0): step 12's layout
                j, e = torch.meshgrid(torch.arange(32), torch.arange(4), indexing="ij")
                lr = (16 * warp + g).view(-1, 1, 1) + 8 * (e // 2)
                lc = (2 * t).view(-1, 1, 1) + 8 * j + e % 2
                row, col = row0 + 64 * wg + lr, col0 + lc
                inside = (row < M) & (col < N)
                C[row[inside], col[inside]] = acc[wg][lr, lc][inside]
                written.index_put_((row[inside], col[inside]), torch.ones_like(row[inside]), accumulate=True)
    return C, written


def tma_store_epilogue(smem, boxes, cbuf, acc, wrow, col0, C, written):
    """16_tma_store.cu's epilogue for one consumer warpgroup (its 64 x 256 accumulators `acc`,
    its first row of C `wrow`, its staging boxes from shared address `boxes`): for each 64-column
    box q, every thread (warp w, lane 4g + t) writes its pairs of results with st.shared.b32 at
    box + r * 128 + ((c ^ g) << 4) + 4t (r = 16w + g, and r + 8 at + 1024), as the kernel
    computes it; then the TMA store reads the box back with CU_TENSOR_MAP_SWIZZLE_128B as the
    driver API defines it (element (rr, cc) at the absolute address box + 128 rr + 2 cc with
    bits 4-6 XORed by bits 7-9), and writes what lies inside M x N to C."""
    M, N = C.shape
    lane = torch.arange(128) % 32
    g, t, r = lane // 4, lane % 4, (torch.arange(128) // 32) * 16 + lane // 4
    for q in range(4):
        box = boxes + (q % cbuf) * TMA_C_BOX_BYTES
        assert box % 1024 == 0, "the 128-byte swizzle works from a 1024-byte boundary"
        filled = torch.zeros(TMA_C_BOX_BYTES // 2, dtype=torch.int64)
        for c in range(8):  # the kernel's chunk loop: accumulator column block j = 8q + c
            j = 8 * q + c
            at = box + r * 128 + ((c ^ g) << 4) + 4 * t
            for dr, addr in ((0, at), (8, at + 8 * 128)):
                for e in range(2):  # the packed pair: column 8j + 2t at the lower address
                    smem[addr // 2 + e] = acc[r + dr, 8 * j + 2 * t + e]
                    filled.index_put_(((addr - box) // 2 + e,), torch.ones(128, dtype=torch.int64), accumulate=True)
        assert bool((filled == 1).all()), ("a staging box not written exactly once", q)
        if wrow >= M or col0 + 64 * q >= N:  # the kernel issues no store for a box wholly outside
            continue
        rr, cc = torch.meshgrid(torch.arange(64), torch.arange(64), indexing="ij")
        vals = smem[swizzle_address(box + 128 * rr + 2 * cc) // 2]
        row, col = wrow + rr, col0 + 64 * q + cc
        inside = (row < M) & (col < N)  # the TMA drops the rest
        C[row[inside], col[inside]] = vals[inside]
        written.index_put_((row[inside], col[inside]), torch.ones_like(row[inside]), accumulate=True)


class MBarrier:
    """An mbarrier as the PTX ISA defines it: a phase completes when its pending arrivals reach
    zero and its transaction count is back at zero; try_wait.parity(P) succeeds while the
    current phase's parity is not P (so it cannot tell a phase from the one two before)."""

    def __init__(self, count):
        self.count, self.pending, self.tx, self.phase = count, count, 0, 0

    def _complete(self):
        assert abs(self.tx) < 1 << 20, "tx-count out of range"
        if self.pending == 0 and self.tx == 0:
            self.phase, self.pending = self.phase + 1, self.count

    def arrive(self, expect_tx=0):
        assert self.pending > 0
        self.tx += expect_tx  # expect-tx first, then the arrival (arrive.expect_tx)
        self.pending -= 1
        self._complete()

    def complete_tx(self, n):
        self.tx -= n
        self._complete()

    def try_wait(self, parity):
        return (self.phase & 1) != parity


def tma_protocol(kernel, M, N, K, clusters=None, seed=0, end_sync=True, ahead=None, stages=TMA_STAGES,
                 store_wait=None, final_wait=True):
    """Runs the barrier protocol of 13_tma.cu, 14_warp_specialized.cu, 15_persistent.cu or
    16_tma_store.cu, as transcribed here, with every agent (the producer thread, each consumer
    warpgroup, each of its 4 warps releasing) and every asynchronous event (a TMA box landing in
    a CTA, a wgmma group finishing, a TMA store finishing its read of a staging box, then its
    writes) interleaved in a random order. Each stage carries the tag of the slice it holds, each
    staging box the tag of the box of C written into it. Fails if a consumer multiplies a stage
    that does not hold its slice, if a box lands in a stage a wgmma is still reading, if a
    staging box is written while a TMA store still reads it (or a store reads a box rewritten
    under it), if anything arrives on a CTA that has exited or a CTA exits with a store
    unfinished, or if nothing can move before the end (a deadlock). `end_sync=False` drops the
    closing cluster barrier of steps 15-16; `ahead` changes step 13's lead; `store_wait`
    changes step 16's cp.async.bulk.wait_group.read count (default CBUF - 1) and
    `final_wait=False` drops its closing wait_group 0 (all to show the checks bite)."""
    import random
    rng = random.Random(seed)
    S, KT = stages, -(-K // 64)
    cbuf = tma_store_cbuf(stages)
    store_wait = cbuf - 1 if store_wait is None else store_wait
    walks = tma_walks(kernel, M, N, clusters)
    ctas = list(walks)
    cluster_of = {c: (c[0] if kernel in PERSISTENT else c) for c in ctas}
    peers = {c: [d for d in ctas if cluster_of[d] == cluster_of[c]] for c in ctas}
    # empty barriers: one arrival per consumer warp (of both CTAs for step 15); step 13 has none
    full = {c: [MBarrier(1) for _ in range(S)] for c in ctas}
    empty = {c: [MBarrier(8 * len(peers[c])) for _ in range(S)] for c in ctas}
    tag = {c: [{} for _ in range(S)] for c in ctas}  # box ("A", 0..3) -> the slice it holds: (row0, col0, it)
    reading = {c: [0] * S for c in ctas}  # wgmma groups in flight on each stage
    exited = set()
    # step 16: the tag of what each staging box of each consumer warpgroup holds, and each
    # warpgroup's bulk async-groups in commit order: [box or None (empty group), read done, written]
    staging = {(c, wg): [None] * cbuf for c in ctas for wg in range(2)}
    bulk = {(c, wg): [] for c in ctas for wg in range(2)}
    events = []  # pending asynchronous completions: callables
    agents = []  # [cta, generator, condition]
    syncs = {}  # __syncthreads / cluster barrier generations: key -> arrivals

    def landed(dst, s, box, what, nbytes):
        def event():
            assert dst not in exited, "a TMA box lands in a CTA that has exited"
            assert reading[dst][s] == 0, ("a box lands in a stage a wgmma is reading", dst, s, what)
            tag[dst][s][box] = what
            full[dst][s].complete_tx(nbytes)
        return event

    def holds(cta, s, row0, col0, it):
        """Every box the slice needs is in the stage (skipped boxes: whatever is there)."""
        boxes = (["A"] if row0 < M else []) + [j for j in range(4) if col0 + 64 * j < N]
        return all(tag[cta][s].get(b) == (row0, col0, it) for b in boxes)

    def arrive_on(cta, bar):
        assert cta not in exited, "an arrival on a CTA that has exited"
        bar.arrive()

    def barrier(key, n):
        """A barrier of n agents: returns the condition that it has filled up."""
        gen = syncs.setdefault(key, [0])
        gen[0] += 1
        target = -(-gen[0] // n) * n
        return lambda: gen[0] >= target

    def load(cta, it, row0, col0):
        s = it % S
        full[cta][s].arrive(tma_stage_bytes(row0, col0, M, N))
        what = (row0, col0, it)
        if row0 < M:
            events.append(landed(cta, s, "A", what, TMA_A_BYTES))
        for j in range(4):
            if col0 + 64 * j >= N:
                continue
            if kernel not in PERSISTENT:
                events.append(landed(cta, s, j, what, TMA_B_BOX_BYTES))
            elif j % 2 == cta[1]:  # this CTA's half of B, multicast into both (the peer's slice
                for d in peers[cta]:  # `it` is its own tile's: same col0, its own row0)
                    events.append(landed(d, s, j, (walks[d][it // KT][0], col0, it), TMA_B_BOX_BYTES))

    def producer(cta):  # steps 14 and 15: thread 0 of warpgroup 0
        it = 0
        for row0, col0 in walks[cta]:
            for kt in range(KT):
                s = it % S
                if it >= S:
                    bar, parity = empty[cta][s], (it // S - 1) & 1
                    yield lambda bar=bar, parity=parity: bar.try_wait(parity)
                load(cta, it, row0, col0)
                it += 1

    def store_read(key, group, box, what):
        def event():  # the TMA has read the staging box: then, later, its writes land
            assert key[0] not in exited, "a TMA store reads the shared memory of a CTA that has exited"
            assert staging[key][box] == what, ("a TMA store reads a staging box rewritten under it", key, box)
            group[1] = True
            events.append(lambda: group.__setitem__(2, True))
        return event

    def epilogue(cta, wg, row0, col0, tile):  # step 16's staging and TMA stores, one consumer warpgroup
        key = (cta, wg)
        groups = bulk[key]
        for q in range(4):
            box = q % cbuf
            # the issuing thread's wait_group.read(store_wait): all but the newest store_wait groups have read
            older = groups[:max(len(groups) - store_wait, 0)]
            yield lambda older=older: all(grp[1] for grp in older)
            yield lambda: True  # the warpgroup's named barrier; then every thread writes the box
            assert not any(grp[0] == box and not grp[1] for grp in groups), (
                "a staging box written while a TMA store still reads it", key, box)
            staging[key][box] = (tile, q)
            yield lambda: True  # fence.proxy.async, the named barrier: then the issuing thread
            if row0 + 64 * wg < M and col0 + 64 * q < N:
                grp = [box, False, False]
                events.append(store_read(key, grp, box, (tile, q)))
            else:
                grp = [None, True, True]  # an empty group
            groups.append(grp)

    def consumer(cta, wg):  # steps 14 to 16: one warpgroup; its 4 warps release one by one
        it = 0
        groups = []  # (stage) of this warpgroup's wgmma groups in flight, oldest first

        def finish(upto):
            while len(groups) > upto:
                reading[cta][groups.pop(0)] -= 1

        def release(s):
            for w in range(4):
                yield lambda: True  # the warps get there one at a time
                if kernel in PERSISTENT:
                    for d in peers[cta]:  # lane 0 -> rank 0, lane 1 -> rank 1
                        arrive_on(d, empty[d][s])
                else:
                    arrive_on(cta, empty[cta][s])

        for row0, col0 in walks[cta]:
            for kt in range(KT):
                s = it % S
                bar, parity = full[cta][s], (it // S) & 1
                yield lambda bar=bar, parity=parity: bar.try_wait(parity)
                assert holds(cta, s, row0, col0, it), ("multiplying a stage without its slice", cta, it, tag[cta][s])
                reading[cta][s] += 1
                groups.append(s)
                events.append(lambda: finish(len(groups) - 1) if groups else None)  # the oldest group finishes
                finish(1)  # wgmma_wait<1>
                if kt > 0:
                    yield from release((it - 1) % S)
                it += 1
            finish(0)  # wgmma_wait<0>
            if kernel in PERSISTENT:
                yield from release((it - 1) % S)
            if kernel == "tma_store":
                yield from epilogue(cta, wg, row0, col0, len(bulk[(cta, wg)]) // 4)
        if kernel == "tma_store":
            if final_wait:  # cp.async.bulk.wait_group 0: every store written
                yield lambda: all(grp[2] for grp in bulk[(cta, wg)])
            # from here the CTA may exit as soon as the others reach the cluster barrier
            assert all(grp[1] and grp[2] for grp in bulk[(cta, wg)]), "a CTA may exit with a TMA store unfinished"

    def block13(cta, wg):  # step 13: both warpgroups multiply, thread 0 (in warpgroup 0) loads
        lead = S - 2 if ahead is None else ahead
        row0, col0 = walks[cta][0]
        groups = []

        def finish(upto):
            while len(groups) > upto:
                reading[cta][groups.pop(0)] -= 1

        if wg == 0:
            for kt in range(min(lead, KT)):
                load(cta, kt, row0, col0)
        for kt in range(KT):
            yield barrier((cta, "syncthreads"), 2)
            if wg == 0 and kt + lead < KT:
                load(cta, kt + lead, row0, col0)  # the landing events check the buffer is free
            s = kt % S
            bar, parity = full[cta][s], (kt // S) & 1
            yield lambda bar=bar, parity=parity: bar.try_wait(parity)
            assert holds(cta, s, row0, col0, kt), ("multiplying a stage without its slice", cta, kt, tag[cta][s])
            reading[cta][s] += 1
            groups.append(s)
            events.append(lambda: finish(len(groups) - 1) if groups else None)
            finish(1)
        finish(0)

    def cta_end(cta, body):  # steps 15-16: the closing cluster barrier, then the CTA exits
        yield from body
        if kernel in PERSISTENT and end_sync:
            yield barrier(("cluster", cluster_of[cta]), 3 * len(peers[cta]))
        done[cta] -= 1
        if done[cta] == 0:
            for wg in range(2):
                assert all(grp[1] and grp[2] for grp in bulk[(cta, wg)]), "a CTA exits with a TMA store unfinished"
            exited.add(cta)

    done = {}
    for cta in ctas:
        bodies = ([block13(cta, 0), block13(cta, 1)] if kernel == "tma" else
                  [producer(cta), consumer(cta, 0), consumer(cta, 1)])
        done[cta] = len(bodies)
        for body in bodies:
            agents.append([cta, cta_end(cta, body), lambda: True])
    while agents or events:
        ready = [a for a in agents if a[2]()]
        choice = rng.randrange(len(ready) + len(events)) if ready or events else None
        assert choice is not None, "deadlock: nothing can move"
        if choice >= len(ready):
            events.pop(choice - len(ready))()
            continue
        agent = ready[choice]
        try:
            agent[2] = next(agent[1])
        except StopIteration:
            agents.remove(agent)
    for c in ctas:
        assert all(r == 0 for r in reading[c])


def check_tma_protocol(seeds=range(3)):
    """The four steps' barrier protocols, on shapes with one and several slices, a pair tile
    half below M, the ring wrapping within a tile and across tiles (steps 15 and 16 on 1 and 2
    clusters, step 16 with both rings and staging areas)."""
    for seed in seeds:
        for M, N, K in ((1, 8, 8), (130, 264, 520), (300, 200, 200)):
            tma_protocol("tma", M, N, K, seed=seed)
            tma_protocol("warp_specialized", M, N, K, seed=seed)
        for clusters in (1, 2, None):
            for M, N, K in ((130, 264, 520), (300, 520, 136), (520, 300, 72)):
                tma_protocol("persistent", M, N, K, clusters=clusters, seed=seed)
                for stages in (4, 3):  # step 16: two staging boxes per warpgroup, or four
                    tma_protocol("tma_store", M, N, K, clusters=clusters, seed=seed, stages=stages)


# ---- step 17: the tuned fp32 warp tile ----------------------------------------------------
# (BM, BN, BK, WM, WN, TM, TN, THREADS) of 17_warptile_tuned.cu's launchers, by config name.
# (BM, BN, BK, WM, WN, TM, TN, THREADS[, GROUP]) of each launcher of 17_warptile_tuned.cu.
WARPTILE_TUNED = {"128x128x8_256t": (128, 128, 8, 64, 32, 8, 8, 256),
                  "128x128x16_256t": (128, 128, 16, 64, 32, 8, 8, 256),
                  "128x256x8_256t": (128, 256, 8, 64, 64, 8, 16, 256),
                  "256x128x8_256t": (256, 128, 8, 128, 32, 16, 8, 256),
                  "128x128x8_128t": (128, 128, 8, 64, 64, 8, 16, 128),
                  "128x256x16_256t": (128, 256, 16, 64, 64, 8, 16, 256),
                  "256x128x16_256t": (256, 128, 16, 128, 32, 16, 8, 256),
                  "128x256x8_256t_g8": (128, 256, 8, 64, 64, 8, 16, 256, 8),
                  "128x256x16_256t_g8": (128, 256, 16, 64, 64, 8, 16, 256, 8),
                  "128x256x16_256t_4x2": (128, 256, 16, 32, 128, 8, 16, 256)}


def tile_of_block(by, bx, grid_y, grid_x, GROUP):
    """17_warptile_tuned.cu's tile_of_block: block (by, bx) of a grid_y x grid_x grid -> its (tile row,
    tile column); GROUP rows of tiles a group, walked down before across (GROUP = 0: the grid itself)."""
    if GROUP == 0:
        return by, bx
    pid, per_group = by * grid_x + bx, GROUP * grid_x
    first = (pid // per_group) * GROUP
    rows = min(grid_y - first, GROUP)
    return first + (pid % per_group) % rows, (pid % per_group) // rows


def warptile_tuned_places(BM, BN, BK, WM, WN, TM, TN, THREADS):
    """TunedTile's index math for every thread: (the A and B global coordinates and shared
    offsets of fetch / stash, the shared offsets multiply reads per k, the C coordinates store
    writes), as 17_warptile_tuned.cu computes them."""
    LR, LC, LDA = WM // TM, WN // TN, BM + 4
    A_LOADS, B_LOADS = BM * BK // 4 // THREADS, BK * BN // 4 // THREADS
    tid = torch.arange(THREADS)
    e4 = torch.arange(4)
    # fetch + stash: float4 i of thread tid; A row m, k = 4 kq .. 4 kq + 3 -> As[(k + e) * LDA + m]
    a_idx = (tid.view(-1, 1) + THREADS * torch.arange(A_LOADS)).flatten()
    a_m, a_k = a_idx // (BK // 4), (a_idx % (BK // 4)) * 4
    a_dst = (a_k.view(-1, 1) + e4) * LDA + a_m.view(-1, 1)  # (loads, 4)
    b_idx = (tid.view(-1, 1) + THREADS * torch.arange(B_LOADS)).flatten()
    b_k, b_n = b_idx // (BN // 4), (b_idx % (BN // 4)) * 4
    b_dst = b_k.view(-1, 1) * BN + b_n.view(-1, 1) + e4
    # multiply: origin(), then TM / 4 float4s of A at o.x + 4 LR s, TN / 4 of B at o.y + 4 LC s
    warp, lane = tid // 32, tid % 32
    ox = (warp // (BN // WN)) * WM + (lane // LC) * 4
    oy = (warp % (BN // WN)) * WN + (lane % LC) * 4
    rows = ox.view(-1, 1) + (torch.arange(TM) // 4) * 4 * LR + torch.arange(TM) % 4  # (threads, TM)
    cols = oy.view(-1, 1) + (torch.arange(TN) // 4) * 4 * LC + torch.arange(TN) % 4  # (threads, TN)
    return (a_m, a_k, a_dst, b_k, b_n, b_dst, rows, cols, LDA)


def warptile_tuned_kernel(Am, Bm, BM, BN, BK, WM, WN, TM, TN, THREADS, GROUP=0):
    """17_warptile_tuned.cu: fetch (load4: zero outside the matrix), stash into the buffer the
    pipeline names, multiply from the other, store4 (dropping what is outside M x N). The
    buffers start as NaN, so a read of anything not staged shows up in C."""
    M, K = Am.shape
    N = Bm.shape[1]
    a_m, a_k, a_dst, b_k, b_n, b_dst, rows, cols, LDA = warptile_tuned_places(BM, BN, BK, WM, WN, TM, TN, THREADS)
    for dst, size in ((a_dst, BK * LDA), (b_dst, BK * BN)):  # every float staged once, inside its buffer
        assert len(set(dst.flatten().tolist())) == dst.numel() and int(dst.max()) < size
    assert dst.numel() == BK * BN and a_dst.numel() == BK * BM
    assert bool((rows[:, ::4] % 4 == 0).all()) and bool((cols[:, ::4] % 4 == 0).all()) and LDA % 4 == 0, \
        "float4 shared loads 16-byte aligned"
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    written = torch.zeros(M, N, dtype=torch.int64)
    Ap = torch.zeros(M + BM, K + BK, dtype=torch.float64)  # load4's zero fill, as padding
    Ap[:M, :K] = Am
    Bp = torch.zeros(K + BK, N + BN, dtype=torch.float64)
    Bp[:K, :N] = Bm
    e4 = torch.arange(4)
    grid_y, grid_x = -(-M // BM), -(-N // BN)
    for block in itertools.product(range(grid_y), range(grid_x)):
        by, bx = tile_of_block(*block, grid_y, grid_x, GROUP)
        rowBase, colBase = by * BM, bx * BN
        As = torch.full((2, BK * LDA), float("nan"), dtype=torch.float64)
        Bs = torch.full((2, BK * BN), float("nan"), dtype=torch.float64)

        def fetch(k0):
            return (Ap[(rowBase + a_m).view(-1, 1), (k0 + a_k).view(-1, 1) + e4],
                    Bp[(k0 + b_k).view(-1, 1), (colBase + b_n).view(-1, 1) + e4])

        def stash(regs, buf):
            As[buf][a_dst] = regs[0]
            Bs[buf][b_dst] = regs[1]

        acc = torch.zeros(THREADS, TM, TN, dtype=torch.float64)
        stash(fetch(0), 0)
        cur = 0
        for k0 in range(0, K, BK):
            more = k0 + BK < K
            regs = fetch(k0 + BK) if more else None
            for d in range(BK):
                a = As[cur][d * LDA + rows]
                b = Bs[cur][d * BN + cols]
                acc += a.unsqueeze(2) * b.unsqueeze(1)
            if more:
                stash(regs, cur ^ 1)
            cur ^= 1
        row = rowBase + rows.unsqueeze(2).expand(-1, -1, TN)
        col = colBase + cols.unsqueeze(1).expand(-1, TM, -1)
        inside = (row < M) & (col < N)
        C[row[inside], col[inside]] = acc[inside]
        written.index_put_((row[inside], col[inside]), torch.ones_like(row[inside]), accumulate=True)
    return C, written


def check_warptile_tuned_banks():
    """Bank conflicts of 17_warptile_tuned.cu, per warp: each float4 shared load of multiply
    touches consecutive 16-byte chunks (its distinct addresses in distinct bank quads: one
    pass), and the scalar stores of the transposed A slice hit distinct banks with BK = 8, at
    most two ways with BK = 16."""
    for name, cfg in WARPTILE_TUNED.items():
        BM, BN, BK, WM, WN, TM, TN, THREADS = cfg[:8]
        a_m, a_k, a_dst, b_k, b_n, b_dst, rows, cols, LDA = warptile_tuned_places(*cfg[:8])
        for w in range(THREADS // 32):
            lanes = slice(32 * w, 32 * w + 32)
            for addrs in [rows[lanes, 4 * s] for s in range(TM // 4)] + [cols[lanes, 4 * s] for s in range(TN // 4)]:
                chunks = sorted(set((addrs // 4).tolist()))  # distinct 16-byte chunks (k = 0; any k adds a multiple of 4)
                assert chunks == list(range(chunks[0], chunks[0] + len(chunks))) and len(chunks) <= 8, (name, chunks)
        for i in range(a_dst.shape[0] // THREADS):  # the i-th float4 of every thread, element e
            for w in range(THREADS // 32):
                for e in range(4):
                    addr = a_dst.view(THREADS, -1, 4)[32 * w:32 * w + 32, i, e]
                    banks = torch.bincount(addr % 32, minlength=32)
                    assert int(banks.max()) <= (1 if BK == 8 else 2), (name, banks.tolist())


def check_warptile_tuned(shapes=((1, 1, 1), (33, 65, 31), (130, 67, 45), (300, 264, 40), (1100, 530, 12)),
                         configs=WARPTILE_TUNED):
    """Each config's C against Am @ Bm, every element written once; 1100 rows make a whole group of
    8 tile rows and a partial one for the grouped (_g8) configs."""
    gen = torch.Generator().manual_seed(0)
    for M, N, K in shapes:
        Am = torch.randint(-3, 4, (M, K), generator=gen).double()
        Bm = torch.randint(-3, 4, (K, N), generator=gen).double()
        for name in configs:
            check(*warptile_tuned_kernel(Am, Bm, *WARPTILE_TUNED[name]), Am, Bm, f"warptile_tuned {name} {M}x{N}x{K}")


def check(C, written, Am, Bm, what):
    assert bool((written == 1).all()), (what, "not every element written exactly once",
                                        (written != 1).nonzero()[:5].tolist())
    assert torch.equal(C, Am @ Bm), (what, (C != Am @ Bm).nonzero()[:5].tolist())


def check_products(shapes=SHAPES, configs=CP_ASYNC_CONFIGS, seed=0,
                   kernels=("mma_sync", "cp_async", "wgmma", "tma", "persistent", "tma_store")):
    gen = torch.Generator().manual_seed(seed)
    for M, N, K in shapes:
        Am = torch.randint(-3, 4, (M, K), generator=gen).double()
        Bm = torch.randint(-3, 4, (K, N), generator=gen).double()
        if "mma_sync" in kernels:
            check(*mma_sync_kernel(Am, Bm), Am, Bm, f"mma_sync {M}x{N}x{K}")
        for cfg in configs if "cp_async" in kernels else ():
            for vec in (True, False):
                check(*cp_async_kernel(Am, Bm, *cfg, vec), Am, Bm, f"cp_async {cfg} vec={vec} {M}x{N}x{K}")
        for vec in (True, False) if "wgmma" in kernels else ():
            check(*wgmma_kernel(Am, Bm, vec), Am, Bm, f"wgmma vec={vec} {M}x{N}x{K}")
        if K % 8 == 0 and N % 8 == 0:  # the TMA steps take 16-byte aligned rows only
            for kernel in ("tma", "warp_specialized") if "tma" in kernels else ():
                check(*tma_kernel(Am, Bm, kernel), Am, Bm, f"{kernel} {M}x{N}x{K}")
            for clusters in (1, 2, None) if "persistent" in kernels else ():
                check(*tma_kernel(Am, Bm, "persistent", clusters), Am, Bm, f"persistent {clusters} clusters {M}x{N}x{K}")
            for clusters in (1, None) if "tma_store" in kernels else ():
                for stages in (4, 3):
                    check(*tma_kernel(Am, Bm, "tma_store", clusters, stages=stages), Am, Bm,
                          f"tma_store stages={stages} {clusters} clusters {M}x{N}x{K}")
            if "tma_store" in kernels:  # C not 16-byte aligned: the stores from registers
                check(*tma_kernel(Am, Bm, "tma_store", 2, aligned_c=False), Am, Bm, f"tma_store unaligned C {M}x{N}x{K}")


def check_grouped_order():
    """The grouped block order visits every tile exactly once."""
    for tilesM, tilesN in itertools.product((1, 3, 8, 9, 17, 32), (1, 2, 5, 16)):
        got = [grouped_block_origin(bid, tilesM, tilesN) for bid in range(tilesM * tilesN)]
        assert sorted(got) == list(itertools.product(range(tilesM), range(tilesN))), (tilesM, tilesN)


def check_ldmatrix_banks():
    """Each 8-row phase of an ldmatrix hits 8 distinct 16-byte bank groups (of the 8 in 128
    bytes) for every padded row length the kernels use: BK + 8 for A, BN + 8 for B."""
    for name, ld in (("A BK=32", 40), ("A BK=64", 72), ("B BN=128", 136), ("B BN=256", 264)):
        addr = ((LANES % 16) * ld + (LANES // 16) * 8) * 2  # bytes
        for m in range(4):
            slots = (addr[8 * m:8 * m + 8] // 16) % 8
            assert len(set(slots.tolist())) == 8, (name, slots)


def main():
    torch.set_num_threads(1)  # thousands of tiny tensor ops: threads only add overhead
    check_grouped_order()
    check_ldmatrix_banks()
    check_wgmma_layout()
    check_tma_layout()
    check_tma_protocol()
    check_products()
    check_products(shapes=TMA_SHAPES, kernels=("tma", "persistent", "tma_store"))
    check_warptile_tuned_banks()
    check_warptile_tuned()
    print("steps 10 to 16: index math checked on", len(SHAPES), "shapes x",
          1 + 2 * len(CP_ASYNC_CONFIGS) + 2, "kernel variants, steps 13 to 16 also on", len(TMA_SHAPES),
          "more; the mbarrier and TMA-store protocols of steps 13 to 16 on random interleavings; step 17's",
          len(WARPTILE_TUNED), "configs")


if __name__ == "__main__":
    main()
