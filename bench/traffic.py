"""The bytes model: how much global memory a tiled product must move, derived from its tile.

A block that owns a BM x BN tile of C reads a BM x K strip of A and a K x BN strip of B,
so A is read once per column of tiles and B once per row of tiles:

    words read = M*K*ceil(N/BN) + K*N*ceil(M/BM)   (about 2MNK/T for T x T tiles)
    words written = M*N

An implementation with no on-chip reuse (the naive kernels) is the BM = BN = 1 case:
2MNK words. Caches are left out on purpose: this is what tiling itself guarantees.
"""
import math


def modeled_bytes(M: int, N: int, K: int, elem_bytes: int, tile) -> int | None:
    """Modeled global-memory bytes for a (BM, BN) tile, or None when the tile is unknown (cuBLAS)."""
    if tile is None:
        return None
    bm, bn = tile
    words = M * K * math.ceil(N / bn) + K * N * math.ceil(M / bm) + M * N
    return words * elem_bytes


def minimum_bytes(M: int, N: int, K: int, elem_bytes: int) -> int:
    """Each input read once, the output written once: the floor no tiling beats."""
    return (M * K + K * N + M * N) * elem_bytes


def intensity(M: int, N: int, K: int, nbytes) -> float | None:
    """Arithmetic intensity, FLOP per byte of modeled traffic."""
    return None if not nbytes else 2.0 * M * N * K / nbytes
