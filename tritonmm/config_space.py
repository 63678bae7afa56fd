"""Tile spaces per dtype family, the pruning that keeps them legal, and a no-tuning heuristic.

A config is the tile shape (BLOCK_M, BLOCK_N, BLOCK_K), the grouping of programs (GROUP_M),
``num_warps`` and the software-pipelining depth ``num_stages``. Each family gets its own
space because the best tiles differ: 16-bit tiles are half the bytes of fp32 ones, TF32
runs on tensor cores with BLOCK_K of 32, and IEEE fp32 runs on the FMA units, where
smaller K steps and fewer stages win.
"""
import triton
import torch

TILE_PARAMS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")
LAUNCH_PARAMS = ("num_warps", "num_stages")

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps[, GROUP_M=8]). Measured on an H100
# (notes/NOTES.md): 128x256 tiles win large shapes by ~10% in every family (TMA path), and
# GROUP_M moves the 16-bit winner by up to 6%, so it varies there; the small tiles serve
# small M or N, where a big tile leaves SMs idle. Eight configs keep a cold tune near 12 s.
_SPACES = {
    "16bit": [
        (128, 256, 64, 4, 8), (128, 256, 64, 4, 8, 4), (128, 256, 64, 4, 8, 16), (128, 256, 64, 3, 8),
        (128, 128, 64, 5, 4), (128, 64, 64, 4, 4), (64, 128, 64, 4, 4), (64, 64, 128, 4, 4),
    ],
    "tf32": [
        (128, 256, 32, 3, 8), (128, 256, 32, 3, 8, 4), (256, 128, 32, 3, 8), (128, 128, 64, 3, 8),
        (128, 128, 32, 5, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 64, 4, 4),
    ],
    "ieee": [
        (128, 128, 16, 3, 8), (128, 128, 32, 3, 8), (128, 128, 32, 2, 8), (128, 64, 32, 3, 4), (64, 128, 32, 3, 4),
        (64, 64, 32, 3, 4), (128, 256, 16, 2, 8),
    ],
}


def family(dtype: torch.dtype, precision: str) -> str:
    """The config space a (dtype, precision) pair tunes over."""
    if dtype in (torch.float16, torch.bfloat16):
        return "16bit"
    return precision  # float32: "tf32" or "ieee"


def make_config(BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, GROUP_M=8) -> triton.Config:
    return triton.Config(dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M),
                         num_warps=num_warps, num_stages=num_stages)


def plain(cfg: triton.Config) -> triton.Config:
    """The same tile and launch parameters without a pre_hook: the form tritonmm caches and
    compares (the autotuner's configs carry fit_descriptors as their hook)."""
    return make_config(num_warps=cfg.num_warps, num_stages=cfg.num_stages, **cfg.kwargs)


def space(family_name: str) -> list:
    """The configs of one family ('16bit', 'tf32' or 'ieee')."""
    return [make_config(*t) for t in _SPACES[family_name]]


def configs(dtype: torch.dtype = torch.float16, input_precision: str = "tf32") -> list:
    """Every config tritonmm tunes over for ``dtype`` (and, for float32, ``input_precision``)."""
    return space(family(dtype, input_precision))


def smem_bytes(cfg: triton.Config, elem_bytes: int, tma: bool, matrix_bias: bool = False) -> int:
    """Shared memory a config needs: num_stages A and B tiles, the half C tile a TMA store
    stages, a whole tile's layout conversion for a matrix bias (kernels/tiles.py), and 1 KiB
    for barriers and alignment."""
    k = cfg.kwargs
    tile = k["BLOCK_M"] * k["BLOCK_N"] * elem_bytes
    operands = cfg.num_stages * (k["BLOCK_M"] + k["BLOCK_N"]) * k["BLOCK_K"] * elem_bytes
    return operands + (tile // 2 if tma else 0) + (tile if matrix_bias else 0) + 1024


def bucket(n: int) -> int:
    """Shape bucket of one dimension: the next power of two, at least 16. Shapes in one
    bucket share a tuned config, and blocks are pruned against it."""
    return 1 << max(4, (n - 1).bit_length())


def prune(cfgs, M, N, K, elem_bytes, smem_limit, tma, matrix_bias=False):
    """Drop configs that cannot fit in shared memory, and those whose blocks are far
    larger than the problem (a 256-row tile for 16 rows is 94% masked work) when a
    smaller block of the space would do. Returns (kept, reasons for each dropped)."""
    fits = [c for c in cfgs if smem_bytes(c, elem_bytes, tma, matrix_bias) <= smem_limit]
    dropped = {"shared memory": len(cfgs) - len(fits)}
    kept = fits
    for dim, size in (("BLOCK_M", M), ("BLOCK_N", N), ("BLOCK_K", K)):
        smallest = min((c.kwargs[dim] for c in kept), default=0)
        cap = max(bucket(size), smallest)
        kept, before = [c for c in kept if c.kwargs[dim] <= cap], len(kept)
        dropped[f"{dim} > {cap}"] = before - len(kept)
    return kept, {why: n for why, n in dropped.items() if n}


# The pointer kernel's largest tile for the heuristic. Tuned on 1024 and 4096 x 16384 x 4096
# bf16 (x @ W.T) on the H100, 64x128x64 (4 warps, 4 stages) ran at 302-312 TFLOP/s and the
# 128x256x64 tile the heuristic chose before at 127-130 (notes/NOTES.md, run 15).
POINTER_MAX_TILE = 64 * 128


def heuristic(M, N, K, dtype, precision, num_sms, elem_bytes, smem_limit, tma, matrix_bias=False) -> triton.Config:
    """A config chosen from the shape alone, for TRITONMM_AUTOTUNE=0, the CPU interpreter and
    compiled graphs: among the configs that fit, the largest tile that still gives every SM a
    tile (on the pointer kernel, at most POINTER_MAX_TILE elements)."""
    kept, _ = prune(configs(dtype, precision), M, N, K, elem_bytes, smem_limit, tma, matrix_bias)
    kept = [c for c in kept if tma or c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= POINTER_MAX_TILE] or kept
    kept = kept or configs(dtype, precision)[-1:]

    def score(c):
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
        return (min(tiles, num_sms), bm * bn, c.kwargs["BLOCK_K"], c.num_warps)

    return max(kept, key=score)


def as_list(cfg: triton.Config) -> list:
    """A config as the int list torch.library operators take: BM, BN, BK, GROUP_M, warps, stages."""
    k = cfg.kwargs
    return [k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], k["GROUP_M"], cfg.num_warps, cfg.num_stages]


def from_list(values) -> triton.Config:
    """The inverse of as_list."""
    bm, bn, bk, group_m, warps, stages = values
    return make_config(bm, bn, bk, stages, warps, GROUP_M=group_m)
