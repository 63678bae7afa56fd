"""Tile spaces per dtype family, the pruning that keeps them legal, and the variants the tuner times
(split-K, wave-tail, narrow and short tiles). default_config.py picks one without timing.

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


TILE_PARAMS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "TAIL")
LAUNCH_PARAMS = ("num_warps", "num_stages")

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps[, GROUP_M=8]) per family. 128x256 tiles win large shapes in
# every family on the TMA path; 6-stage 64-128 tiles and 64x128x128 serve mid-size products; 256x128 serves tall
# products whose N leaves a wider tile mostly empty (TUNED_TMA_ONLY). About ten configs keep a cold tune near 12 s.
# design.md: tile-space-16bit, tile-spaces, tile-space-tf32x3-split.
_SPACES = {
    "16bit": [
        (128, 256, 64, 4, 8), (128, 256, 64, 4, 8, 16), (128, 256, 64, 3, 8), (128, 128, 64, 5, 4),
        (128, 128, 64, 6, 4), (64, 256, 64, 4, 4), (128, 64, 64, 6, 4), (64, 128, 64, 6, 4), (64, 128, 128, 4, 4),
        (64, 64, 128, 4, 4), (256, 128, 64, 4, 8),
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
    "ieee": [
        (128, 128, 16, 3, 8), (128, 128, 32, 3, 8), (128, 128, 32, 2, 8), (128, 64, 32, 3, 4), (64, 128, 32, 3, 4),
        (64, 64, 32, 3, 4), (128, 256, 16, 2, 8),
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


def gemv_space() -> list:
    """The one-row kernel's configs (BLOCK_M = 1), for a B contiguous along K."""
    return [make_config(1, bn, bk, stages, warps) for bn, bk, stages, warps in _GEMV]


def is_gemv(cfg: triton.Config) -> bool:
    """Whether cfg runs the one-row kernel (BLOCK_M = 1) instead of a tensor-core tile."""
    return cfg.kwargs["BLOCK_M"] == 1


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


def make_config(BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps, GROUP_M=8, SPLIT_K=1, TAIL=0) -> triton.Config:
    """A config; SPLIT_K (split-K's slices of K, kernels/gemm.py) appears only when above 1, TAIL
    (the last wave's rows in a launch of smaller tiles, tail_rows) only when 1."""
    tile = dict(BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M)
    if SPLIT_K != 1:
        tile["SPLIT_K"] = SPLIT_K
    if TAIL:
        tile["TAIL"] = 1
    return triton.Config(tile, num_warps=num_warps, num_stages=num_stages)


def split_k(cfg: triton.Config) -> int:
    return cfg.kwargs.get("SPLIT_K", 1)


def tail(cfg: triton.Config) -> bool:
    return bool(cfg.kwargs.get("TAIL", 0))


def kernel_params(cfg: triton.Config) -> dict:
    """The config's parameters that the block programs take (SPLIT_K and TAIL are the planner's)."""
    return {k: v for k, v in cfg.kwargs.items() if k not in ("SPLIT_K", "TAIL")}


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


def tuning_bucket(n: int) -> int:
    """Shape bucket of one dimension in tuning keys: the next of 2**k and 3 * 2**(k-1), at least
    16. Shapes in one bucket share a tuned config; whole octaves mixed 3072^3's config into 4096^3
    (design.md: tuning-buckets)."""
    p = bucket(n)
    return p * 3 // 4 if p >= 32 and n <= p * 3 // 4 else p


def tuning_shape(M: int, N: int, K: int) -> tuple:
    """A product's shape as tuning keys hold it: each dimension's tuning_bucket (M = 1 apart: one row
    tunes to the one-row kernel, which would run 16 rows 16 times over), and whether K leaves a
    partial last step of 64 (the spaces' common BLOCK_K), which keys apart the shapes that do
    (design.md: tuning-buckets)."""
    return 1 if M == 1 else tuning_bucket(M), tuning_bucket(N), tuning_bucket(K), K % 64 != 0


def prune(cfgs, M, N, K, elem_bytes, smem_limit, tma, matrix_bias=False, out_bytes=None):
    """Drop configs that cannot fit in shared memory, and those whose blocks are far
    larger than the problem (a 256-row tile for 16 rows is 94% masked work) when a
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
    kept = fits
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


# Split-K: a product with fewer tiles than SMs leaves SMs idle, and decode products are bound by how much of the
# weight is in flight. Slices of K give every SM a program; each keeps at least MIN_SPLIT_STEPS K steps for the
# pipeline to overlap, and at most MAX_SPLIT_K slices bound the fp32 workspace and the second pass.
# design.md: split-k.
MAX_SPLIT_K = 16
MIN_SPLIT_STEPS = 4


def split_for(tiles: int, k_steps: int, num_sms: int) -> int:
    """The fewest slices of K (a power of two) that give every SM a program; 1 when the tiles
    already do, or when K is too short to split."""
    split = 1
    while tiles * split < num_sms and split < MAX_SPLIT_K and k_steps // (2 * split) >= MIN_SPLIT_STEPS:
        split *= 2
    return split


def split_of(cfg: triton.Config, M, N, K, num_sms) -> int:
    """split_for with cfg's tile: its tiles over (M, N) and its K steps."""
    k = cfg.kwargs
    return split_for(cdiv(M, k["BLOCK_M"]) * cdiv(N, k["BLOCK_N"]), cdiv(K, k["BLOCK_K"]),
                     num_sms)


def with_split_k(cfgs, M, N, K, num_sms) -> list:
    """cfgs, each followed by its split-K variants where they apply: split_for's count and twice
    that (a decode product is bound by bytes in flight, which more slices raise)."""
    out = []
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        k_steps = cdiv(K, k["BLOCK_K"])
        split = split_of(c, M, N, K, num_sms)
        if split > 1:
            for s in (split, 2 * split):
                if s <= MAX_SPLIT_K and k_steps // s >= MIN_SPLIT_STEPS:
                    out.append(make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(k, SPLIT_K=s)))
    return out


# Split-K on the TMA kernel (kernels/gemm_tma.py): where a config's tiles leave most SMs idle in their last wave
# and K is long, each tile runs as SPLIT_K slices of K, slice-major. The fp32 workspace costs its bytes twice, so it
# pays only where the K steps it saves outweigh that traffic (cost_model.tma_split_pays; design.md: tma-split-k).
TMA_SPLIT_MAX_WORKSPACE = 0.1  # without a cost model: the workspace's bytes, at most this fraction of A's and B's
TMA_SPLIT_MIN_FILL = 0.9  # the fewest slices whose units fill at least this much of their waves
TMA_SPLIT_MIN_STEPS = 16  # K steps a slice, at least: a unit's fp32 store must be short beside its K loop


def _fill(units: int, num_sms: int) -> float:
    """How full the waves of ``units`` programs are on num_sms SMs."""
    return units / (num_sms * cdiv(units, num_sms))


def tma_split_for(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, elem_bytes, num_sms, pays=None) -> int:
    """Slices of K for a TMA tile of BLOCK_M x BLOCK_N: the fewest (2 to MAX_SPLIT_K) whose units fill
    TMA_SPLIT_MIN_FILL of their waves, where the whole tiles fill less, and each slice keeps TMA_SPLIT_MIN_STEPS
    K steps; else 1. The workspace must pay for itself: pays(split) where the device has a cost model
    (cost_model.tma_split_pays), else it stays within TMA_SPLIT_MAX_WORKSPACE of the operands."""
    tiles = cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)
    if _fill(tiles, num_sms) >= TMA_SPLIT_MIN_FILL:
        return 1
    operands = (M + N) * K * elem_bytes
    for split in range(2, MAX_SPLIT_K + 1):
        if cdiv(K, BLOCK_K) // split < TMA_SPLIT_MIN_STEPS:
            return 1
        if _fill(tiles * split, num_sms) >= TMA_SPLIT_MIN_FILL:
            paid = pays(split) if pays is not None else None
            if paid is None:
                paid = split * M * N * 4 <= TMA_SPLIT_MAX_WORKSPACE * operands
            return split if paid else 1
    return 1


def with_tma_split(cfgs, M, N, K, elem_bytes, num_sms, pays=None) -> list:
    """cfgs, the first config of each tile shape followed by its split-K variant where tma_split_for splits;
    pays(config, split): whether that split pays for its workspace (tma_split_for)."""
    out, seen = [], set()
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        shape = (k["BLOCK_M"], k["BLOCK_N"])
        if shape in seen:
            continue
        seen.add(shape)
        split = tma_split_for(M, N, K, *shape, k["BLOCK_K"], elem_bytes, num_sms,
                              None if pays is None else (lambda s, c=c: pays(c, s)))
        if split > 1:
            out.append(make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(k, SPLIT_K=split)))
    return out


# Wave-tail split (TMA path, 16-bit): the persistent kernel runs cdiv(tiles, SMs) rounds of tiles, so a last wave
# holding few tiles costs a whole round. With TAIL, the rows whose tiles fill whole waves run on the config's tiles
# and the rest in a second launch of small tiles over every SM: a tuner variant only where the last wave holds at
# most TAIL_MAX_FILL of the SMs (design.md: wave-tail-split).
TAIL_MAX_FILL = 0.5


def tail_rows(M, N, BLOCK_M, BLOCK_N, num_sms) -> int:
    """Rows [0, tail_rows) whose tiles fill whole waves of num_sms programs; 0 where the last wave is
    more than TAIL_MAX_FILL full, or there is no whole wave."""
    per_row = cdiv(N, BLOCK_N)
    waves, left = divmod(cdiv(M, BLOCK_M) * per_row, num_sms)
    if not waves or not left or left > TAIL_MAX_FILL * num_sms:
        return 0
    rows = waves * num_sms // per_row * BLOCK_M
    return rows if 0 < rows < M else 0


def tail_config(rows, N, num_sms) -> triton.Config:
    """The tile of a wave-tail launch over ``rows`` rows: 64x128 where those tiles fill half the SMs,
    else 64x64 (the better of the two in each of the three measured tails; design.md: wave-tail-split)."""
    wide = cdiv(rows, 64) * cdiv(N, 128) >= num_sms // 2
    return make_config(64, 128, 64, 4, 4) if wide else make_config(64, 64, 128, 4, 4)


def with_tail(cfgs, M, N, num_sms) -> list:
    """cfgs, the first config of each tile shape of 128 rows or more followed by its TAIL variant
    where tail_rows splits the product."""
    out, seen = [], set()
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        shape = (k["BLOCK_M"], k["BLOCK_N"])
        if shape not in seen and k["BLOCK_M"] >= 128 and tail_rows(M, N, *shape, num_sms):
            seen.add(shape)
            out.append(make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(k, TAIL=1)))
    return out


def as_list(cfg: triton.Config) -> list:
    """A config as the int list torch.library operators take: BM, BN, BK, GROUP_M, warps, stages, SPLIT_K, TAIL."""
    k = cfg.kwargs
    return [k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], k["GROUP_M"], cfg.num_warps, cfg.num_stages, split_k(cfg),
            int(tail(cfg))]


def from_list(values) -> triton.Config:
    """The inverse of as_list (shorter lists, from before SPLIT_K and TAIL: one slice, no tail)."""
    bm, bn, bk, group_m, warps, stages, *rest = values
    split, tail_ = (list(rest) + [1, 0][len(rest):])[:2]
    return make_config(bm, bn, bk, stages, warps, GROUP_M=group_m, SPLIT_K=split, TAIL=tail_)
