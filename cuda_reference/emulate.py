"""A CPU emulation of the index math of the tensor-core steps 10 and 11, to check it without a GPU:

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
"""
import itertools

import torch

LANES = torch.arange(32)
G, T = LANES // 4, LANES % 4  # groupID and threadID_in_group of each lane

# (BM, BN, BK, WM, WN, STAGES) of 11_cp_async.cu's launchers
CP_ASYNC_CONFIGS = [(128, 256, 64, 64, 64, 3), (128, 256, 32, 64, 64, 4), (128, 128, 32, 64, 64, 4)]
SHAPES = [(1, 1, 1), (7, 13, 5), (33, 65, 31), (130, 264, 72), (130, 67, 200), (256, 512, 128), (300, 4, 101)]
GROUP_M = 8


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
        perGroup = GROUP_M * tilesN
        firstM = (bid // perGroup) * GROUP_M
        groupRows = min(tilesM - firstM, GROUP_M)
        inGroup = bid % perGroup
        rowBase, colBase = (firstM + inGroup % groupRows) * BM, (inGroup // groupRows) * BN
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


def check(C, written, Am, Bm, what):
    assert bool((written == 1).all()), (what, "not every element written exactly once",
                                        (written != 1).nonzero()[:5].tolist())
    assert torch.equal(C, Am @ Bm), (what, (C != Am @ Bm).nonzero()[:5].tolist())


def check_products(shapes=SHAPES, configs=CP_ASYNC_CONFIGS, seed=0):
    gen = torch.Generator().manual_seed(seed)
    for M, N, K in shapes:
        Am = torch.randint(-3, 4, (M, K), generator=gen).double()
        Bm = torch.randint(-3, 4, (K, N), generator=gen).double()
        check(*mma_sync_kernel(Am, Bm), Am, Bm, f"mma_sync {M}x{N}x{K}")
        for cfg in configs:
            for vec in (True, False):
                check(*cp_async_kernel(Am, Bm, *cfg, vec), Am, Bm, f"cp_async {cfg} vec={vec} {M}x{N}x{K}")


def check_grouped_order():
    """The grouped block order visits every tile exactly once."""
    for tilesM, tilesN in itertools.product((1, 3, 8, 9, 17, 32), (1, 2, 5, 16)):
        got = []
        for bid in range(tilesM * tilesN):
            perGroup = GROUP_M * tilesN
            firstM = (bid // perGroup) * GROUP_M
            groupRows = min(tilesM - firstM, GROUP_M)
            inGroup = bid % perGroup
            got.append((firstM + inGroup % groupRows, inGroup // groupRows))
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
    check_products()
    print("steps 10 and 11: index math checked on", len(SHAPES), "shapes x",
          1 + 2 * len(CP_ASYNC_CONFIGS), "kernel variants")


if __name__ == "__main__":
    main()
