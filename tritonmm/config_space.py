"""Tile spaces per dtype family, the pruning that keeps them legal, and the narrow and short tiles offered
beside them (splits.py: the split-K and wave-tail variants). default_config.py picks one without timing.

A config is the tile shape (BLOCK_M, BLOCK_N, BLOCK_K), the grouping of programs (GROUP_M),
``num_warps`` and the software-pipelining depth ``num_stages``. Each family gets its own
space because the best tiles differ: 16-bit tiles are half the bytes of fp32 ones, TF32
runs on tensor cores with BLOCK_K of 32, and IEEE fp32 runs on the FMA units, where
smaller K steps and fewer stages win.
"""
import triton
import torch

from .precision import FP8_DTYPES


def cdiv(a: int, b: int) -> int:
    """ceil(a / b), for the host: triton.cdiv is a ConstexprFunction, 70x slower a call (design.md: host-cdiv)."""
    return -(-a // b)


TILE_PARAMS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "TAIL", "PER_SM")
# A pinned config's programs an SM at most: more than an SM can hold only run in turn, each value a kernel of its own.
MAX_PER_SM = 4
LAUNCH_PARAMS = ("num_warps", "num_stages")

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps[, GROUP_M=8]) per family. 128x256 tiles win large shapes in
# every family on the TMA path; 6-stage 64-128 tiles and 64x128x128 serve mid-size products; 64x64x128 with 6
# stages streams weights on the TMA kernel (DEEP; before its 4-stage twin, which the pointer kernel, short K and
# devices of less shared memory keep, so that ties go to it); 256x128 serves tall products whose N leaves a wider
# tile mostly empty (TUNED_TMA_ONLY). About ten configs keep a cold tune near 12 s. design.md: tile-space-16bit,
# tile-spaces, tile-space-tf32x3-split, deep-64x64.
_SPACES = {
    "16bit": [
        (128, 256, 64, 4, 8), (128, 256, 64, 4, 8, 16), (128, 256, 64, 3, 8), (128, 128, 64, 5, 4),
        (128, 128, 64, 6, 4), (64, 256, 64, 4, 4), (128, 64, 64, 6, 4), (64, 128, 64, 6, 4), (64, 128, 128, 4, 4),
        (64, 64, 128, 6, 4), (64, 64, 128, 4, 4), (256, 128, 64, 4, 8),
    ],
    "tf32": [
        (128, 256, 32, 3, 8), (128, 256, 32, 3, 8, 4), (256, 128, 32, 3, 8), (128, 128, 64, 3, 8),
        (128, 128, 32, 5, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 64, 4, 4),
    ],
    # Three TF32 products per K step (tl.dot's "tf32x3": the operands' high parts and remainders),
    # so the accumulator and the split operands take more registers than TF32: BLOCK_K 32 and
    # 3-4 stages, as TF32's space, with the 64-wide K tile and 256-row tiles for the tuner to try.
    "tf32x3": [
        (128, 256, 32, 3, 8), (256, 128, 32, 3, 8), (128, 128, 32, 4, 8), (128, 128, 32, 3, 4),
        (128, 128, 64, 3, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4),
    ],
    # tf32x3 on operands split before the kernel (kernels/gemm_tma.py, PRESPLIT): four float32 tiles a K step and
    # two fp32 accumulators keep tiles at 128x128 per 8 warps (design.md: tile-space-tf32x3-split).
    "tf32x3-split": [
        (128, 128, 32, 3, 8), (128, 128, 32, 3, 8, 4), (128, 128, 32, 3, 8, 16), (128, 128, 16, 5, 8),
        (128, 128, 32, 2, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4),
    ],
    # FP8 (scaled_mm): 1-byte operands, so K tiles of 128 for the same bytes per step as 16-bit
    # ones of 64; wgmma takes FP8 from shared memory K-major (staging.k_major_stagers).
    "fp8": [
        (128, 256, 128, 3, 8), (128, 256, 128, 4, 8), (128, 256, 128, 3, 8, 4), (256, 128, 128, 3, 8),
        (128, 128, 128, 4, 8), (128, 128, 128, 4, 4), (64, 128, 128, 4, 4), (64, 64, 128, 4, 4),
    ],
    # IEEE float32 on the pointer kernel's FMA dot: K steps of 16 beat 32 on 64x128 and 128x64 tiles, and 64x128
    # comes first, so that the heuristic's tie between the two goes to it (design.md: ieee-tiles).
    "ieee": [
        (128, 128, 16, 3, 8), (128, 128, 32, 3, 8), (64, 128, 16, 3, 4), (128, 64, 16, 3, 4), (64, 64, 32, 3, 4),
        (128, 256, 16, 2, 8),
    ],
}


# Narrow tiles, offered only where 64x64 tiles leave SMs idle (narrow()): decode products stream the weight through
# more programs without split-K's second pass. design.md: narrow-tiles.
_NARROW = {
    "16bit": [(64, 32, 256, 4, 4)],
}


# Short tiles, offered on the TMA kernel to products of at most SHORT_MAX_ROWS rows (short()), where a 64-row tile
# would be mostly past A's last row, whose zero fill TMA pays for about as a read. design.md: short-tiles.
_SHORT = {
    "16bit": [(16, 64, 256, 5, 4), (16, 128, 128, 6, 4), (16, 64, 128, 8, 4)],
}
SHORT_MAX_ROWS = 32


# One-row products (kernels/gemv.py): configs with BLOCK_M = 1 run the one-row kernel, BLOCK_N columns of C a
# program, K in BLOCK_K chunks on the FMA units; (BLOCK_N, BLOCK_K, num_stages, num_warps). Offered where B runs
# along K (x @ W.T: the weight's rows are read in long contiguous runs). design.md: gemv-space.
_GEMV = [(8, 512, 1, 4), (8, 1024, 1, 8), (4, 1024, 3, 4)]
# The same kernel over BLOCK_M = 2, 4 or 8 rows a program, for IEEE float32 products of a few rows (rules.row_kernel);
# (BLOCK_M, BLOCK_N, BLOCK_K) on 4 warps: each ran fastest at its rows (design.md: ieee-rows).
_ROWS = [(2, 8, 512), (4, 8, 256), (8, 8, 128)]


def gemv_space() -> list:
    """The one-row kernel's configs (BLOCK_M = 1), for a B contiguous along K."""
    return [make_config(1, bn, bk, stages, warps) for bn, bk, stages, warps in _GEMV]


def rows_space() -> list:
    """The row kernel's configs of 2, 4 and 8 rows a program, for a B contiguous along K."""
    return [make_config(bm, bn, bk, 1, 4) for bm, bn, bk in _ROWS]


def rows_config(M: int) -> triton.Config:
    """The row kernel's config for M > 1 rows: as many rows a program as M's next power of two, at most 8 (one config
    built: the rule asks for it at every plan)."""
    bm, bn, bk = min(r for r in _ROWS if r[0] >= min(M, 8))
    return make_config(bm, bn, bk, 1, 4)


# IEEE float32 x @ W.T of 17-128 rows run as their transpose, out.T = W @ x.T (rules.transposed): the weight's
# rows on 128-row tiles, x's rows on BLOCK_N columns. Per most rows of x: (BLOCK_M, BLOCK_N, BLOCK_K, num_stages,
# num_warps) and slices of K, of the 14 pinned on 43 products of 17-128 rows on two Triton versions the best in
# geomean or within 5% of it (design.md: ieee-transpose). More slices than fill the SMs led: more programs an SM.
IEEE_TRANSPOSED = [(32, (128, 32, 32, 3, 4), 8), (64, (128, 64, 16, 3, 4), 8), (128, (128, 32, 32, 3, 4), 4)]


# Few-tile products of long K on the TMA kernel in slices of K (default_config.few_tiles_split; design.md:
# few-tiles-tma): (the fewest tiles, (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps)), the first whose tiles of
# the product reach its fewest. 64x128 ran ahead of 64x64 at like units where it makes 16 tiles or more.
FEW_TILES_TMA = [(16, (64, 128, 128, 4, 4)), (0, (64, 64, 128, 6, 4))]


# tl.dot's smallest tile side: a config of fewer rows runs the row kernel (kernels/gemv.py), BLOCK_M rows a program.
MIN_TILE_SIDE = 16


def is_gemv(cfg: triton.Config) -> bool:
    """Whether cfg runs the row kernel (BLOCK_M below MIN_TILE_SIDE: 1, 2, 4 or 8 rows a program), not a tile."""
    return cfg.kwargs["BLOCK_M"] < MIN_TILE_SIDE


def family(dtype: torch.dtype, precision: str, split_operands: bool = False) -> str:
    """The config space a (dtype, precision) pair tunes over; ``split_operands``: tf32x3 on
    operands split into TF32 parts before the kernel (the TMA path's)."""
    if dtype in (torch.float16, torch.bfloat16):
        return "16bit"
    if dtype in FP8_DTYPES:
        return "fp8"
    if precision == "tf32x3" and split_operands:
        return "tf32x3-split"
    return precision  # float32: "tf32", "tf32x3" or "ieee"


def narrow_space(family_name: str) -> list:
    """The family's narrow tiles (none for most families)."""
    return [make_config(*t) for t in _NARROW.get(family_name, ())]


def narrow(family_name: str, M, N, num_sms) -> list:
    """The family's narrow tiles where 64x64 tiles would leave some of num_sms SMs idle, else none."""
    return narrow_space(family_name) if cdiv(M, 64) * cdiv(N, 64) < num_sms else []


def short_space(family_name: str) -> list:
    """The family's short tiles (none for most families)."""
    return [make_config(*t) for t in _SHORT.get(family_name, ())]


def short(family_name: str, M) -> list:
    """The family's short tiles for a product of M rows on the TMA kernel: where M <= SHORT_MAX_ROWS, else none."""
    return short_space(family_name) if M <= SHORT_MAX_ROWS else []


def make_config(BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, GROUP_M=8, SPLIT_K=1, TAIL=0,
                PER_SM=1) -> triton.Config:
    """A config; SPLIT_K (split-K's slices of K, kernels/gemm.py) appears only when above 1, TAIL
    (the last wave's rows in a launch of smaller tiles, tail_rows) only when 1, PER_SM (the TMA kernel's
    persistent programs an SM, kernel_params) only when above 1."""
    tile = dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M)
    if SPLIT_K != 1:
        tile["SPLIT_K"] = SPLIT_K
    if TAIL:
        tile["TAIL"] = 1
    if PER_SM != 1:
        tile["PER_SM"] = PER_SM
    return triton.Config(tile, num_warps=num_warps, num_stages=num_stages)


def variant(cfg: triton.Config, **changes) -> triton.Config:
    """cfg with the tile parameters in ``changes`` replaced (SPLIT_K=1, TAIL=0 and PER_SM=1 drop them, as
    make_config does)."""
    return make_config(num_warps=cfg.num_warps, num_stages=cfg.num_stages, **dict(cfg.kwargs, **changes))


def split_k(cfg: triton.Config) -> int:
    return cfg.kwargs.get("SPLIT_K", 1)


def tail(cfg: triton.Config) -> bool:
    return bool(cfg.kwargs.get("TAIL", 0))


def per_sm(cfg: triton.Config) -> int:
    return cfg.kwargs.get("PER_SM", 1)


def kernel_params(cfg: triton.Config, num_sms=None) -> dict:
    """The config's parameters that the block programs take (SPLIT_K, TAIL and PER_SM are the planner's). With
    num_sms (the TMA kernel's): NUM_SMS, the persistent grid's programs, PER_SM of them an SM."""
    params = {k: v for k, v in cfg.kwargs.items() if k not in ("SPLIT_K", "TAIL", "PER_SM")}
    if num_sms is not None:
        params["NUM_SMS"] = num_sms * per_sm(cfg)
    return params


def space(family_name: str) -> list:
    """The configs of one family ('16bit', 'fp8', 'tf32', 'tf32x3', 'tf32x3-split' or 'ieee')."""
    return [make_config(*t) for t in _SPACES[family_name]]


def configs(dtype: torch.dtype = torch.float16, input_precision: str = "tf32", split_operands: bool = False) -> list:
    """Every config tritonmm tunes over for ``dtype`` (and, for float32, ``input_precision``).
    ``split_operands``: tf32x3's space on the TMA path, whose operands are split before the
    kernel; a config pinned from the in-register tf32x3 space may not fit shared memory there."""
    return space(family(dtype, input_precision, split_operands))


def smem_bytes(cfg: triton.Config, elem_bytes: int, tma: bool, matrix_bias: bool = False, out_bytes=None) -> int:
    """Shared memory a config needs: num_stages A and B tiles, the half C tile a TMA store
    stages, a whole tile's layout conversion for a matrix bias (kernels/tiles.py), and 1 KiB
    for barriers and alignment. ``out_bytes``: C's element size where it is not the operands'
    (FP8 products)."""
    k = cfg.kwargs
    tile = k["BLOCK_M"] * k["BLOCK_N"] * (out_bytes or elem_bytes)
    operands = cfg.num_stages * (k["BLOCK_M"] + k["BLOCK_N"]) * k["BLOCK_K"] * elem_bytes
    return operands + (tile // 2 if tma else 0) + (tile if matrix_bias else 0) + 1024


def bucket(n: int) -> int:
    """The next power of two, at least 16: blocks are pruned against it."""
    return 1 << max(4, (n - 1).bit_length())


def tuning_bucket(n: int, least: int = 16) -> int:
    """Shape bucket of one dimension in tuning keys: the next of 2**k and 3 * 2**(k-1), at least
    ``least`` (a power of two). Shapes in one bucket share a tuned config; whole octaves mixed 3072^3's
    config into 4096^3 (design.md: tuning-buckets)."""
    p = max(least, 1 << max(0, (n - 1).bit_length()))
    return p * 3 // 4 if p >= 2 * least and n <= p * 3 // 4 else p


def batch_bucket(Z: int) -> int:
    """A batch's entry count as tuning keys hold it: tuning_bucket's steps from 1. A batch's tiles, Z entries'
    worth, fill the SMs or not, and the defaults' rules read Z (default_config.paired, heuristic's share of the
    SMs an entry)."""
    return tuning_bucket(Z, least=1)


def tuning_shape(M: int, N: int, K: int) -> tuple:
    """A product's shape as tuning keys hold it: each dimension's tuning_bucket (M = 1 apart: one row
    tunes to the one-row kernel, which would run 16 rows 16 times over), and whether K leaves a
    partial last step of 64 (the spaces' common BLOCK_K), which keys apart the shapes that do
    (design.md: tuning-buckets)."""
    return 1 if M == 1 else tuning_bucket(M), tuning_bucket(N), tuning_bucket(K), K % 64 != 0


def prune(cfgs, M, N, K, elem_bytes, smem_limit, tma, matrix_bias=False, out_bytes=None):
    """Drop configs that cannot fit in shared memory, DEEP ones off the TMA kernel or deeper than K's steps, and
    those whose blocks are far larger than the problem (a 256-row tile for 16 rows is 94% masked work) when a
    smaller block of the space would do. Returns (kept, reasons for each dropped)."""
    def fit(c):
        return smem_bytes(c, elem_bytes, tma, matrix_bias, out_bytes) <= smem_limit
    fits = [c for c in cfgs if fit(c)]
    dropped = {"shared memory": len(cfgs) - len(fits)}
    if not fits:
        # A GPU with less shared memory than the spaces were sized for (Hopper's 227 KB): each
        # config with the deepest pipeline that fits, rather than an empty space to tune over.
        fits = []
        for c in cfgs:
            for stages in range(c.num_stages - 1, 0, -1):
                shallower = make_config(num_warps=c.num_warps, num_stages=stages, **c.kwargs)
                if fit(shallower):
                    if shallower not in fits:
                        fits.append(shallower)
                    break
        dropped = {"shared memory (the rest kept with fewer stages)": len(cfgs) - len(fits)}
    kept = [c for c in fits if not too_deep(c, K, tma)]
    dropped["deep pipeline (pointer kernel or short K)"] = len(fits) - len(kept)
    for dim, size in (("BLOCK_M", M), ("BLOCK_N", N), ("BLOCK_K", K)):
        smallest = min((c.kwargs[dim] for c in kept), default=0)
        cap = max(bucket(size), smallest)
        kept, before = [c for c in kept if c.kwargs[dim] <= cap], len(kept)
        dropped[f"{dim} > {cap}"] = before - len(kept)
    return kept, {why: n for why, n in dropped.items() if n}


# The pointer kernel's largest tile for the heuristic (design.md: pointer-max-tile).
POINTER_MAX_TILE = 64 * 128

# Configs measured on the TMA kernel only, which the heuristic does not give the pointer kernel
# (design.md: tma-only-configs).
TMA_ONLY = {(64, 128, 128, 4, 4)}

# Deep pipelines, offered only on the TMA kernel where K, or a split's slice of it, holds at least as many K steps
# as they have stages (prune, too_deep); their shallower twin serves the rest: 64x64x128 with 6 stages streamed
# weights 2-30% faster than with 4 stages on the TMA kernel, ran 1-3% slower on the pointer kernel's drawn products,
# and 512^3 11% slower, its 4 K steps under 6 stages (design.md: deep-64x64).
DEEP = {(64, 64, 128, 6, 4)}


def too_deep(c: triton.Config, K: int, tma: bool) -> bool:
    """Whether c is DEEP and runs on the pointer kernel, or each of its slices of K holds fewer K steps than it
    has stages."""
    return _key(c) in DEEP and (not tma or cdiv(cdiv(K, split_k(c)), c.kwargs["BLOCK_K"]) < c.num_stages)


# Configs only the tuner gives, and only on the TMA kernel where N's last 256-wide column of tiles is at most half
# full (tall_tile_serves): 256x128 led only on such tall products (design.md: tall-tile).
TUNED_TMA_ONLY = {(256, 128, 64, 4, 8)}


def _key(c: triton.Config) -> tuple:
    k = c.kwargs
    return k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], c.num_stages, c.num_warps


def tma_only(c: triton.Config) -> bool:
    return _key(c) in TMA_ONLY


def tuned_tma_only(c: triton.Config) -> bool:
    """Whether c is one of TUNED_TMA_ONLY: timed by the tuner on the TMA kernel, never the heuristic's pick."""
    return _key(c) in TUNED_TMA_ONLY


def tall_tile_serves(N: int) -> bool:
    """Whether 128-wide tiles cover N with less padding than 256-wide ones (N of 272: 384 against 512
    columns; N of 400 or 4096: the same), where the tuner times TUNED_TMA_ONLY's tall tile."""
    return cdiv(N, 128) * 128 < cdiv(N, 256) * 256


def as_list(cfg: triton.Config) -> list:
    """A config as the int list torch.library operators take: BM, BN, BK, GROUP_M, warps, stages, SPLIT_K, TAIL,
    PER_SM."""
    k = cfg.kwargs
    return [k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], k["GROUP_M"], cfg.num_warps, cfg.num_stages, split_k(cfg),
            int(tail(cfg)), per_sm(cfg)]


def from_list(values) -> triton.Config:
    """The inverse of as_list (shorter lists, from before SPLIT_K, TAIL and PER_SM: one slice, no tail, one
    program an SM)."""
    bm, bn, bk, group_m, warps, stages, *rest = values
    split, tail_, per = (list(rest) + [1, 0, 1][len(rest):])[:3]
    return make_config(bm, bn, bk, stages, warps, GROUP_M=group_m, SPLIT_K=split, TAIL=tail_, PER_SM=per)
