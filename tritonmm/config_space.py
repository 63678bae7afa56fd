"""Tile spaces per dtype family, the pruning that keeps them legal, and a no-tuning heuristic.

A config is the tile shape (BLOCK_M, BLOCK_N, BLOCK_K), the grouping of programs (GROUP_M),
``num_warps`` and the software-pipelining depth ``num_stages``. Each family gets its own
space because the best tiles differ: 16-bit tiles are half the bytes of fp32 ones, TF32
runs on tensor cores with BLOCK_K of 32, and IEEE fp32 runs on the FMA units, where
smaller K steps and fewer stages win.
"""
import triton
import torch

from .validation import FP8_DTYPES


def cdiv(a: int, b: int) -> int:
    """ceil(a / b), for the host. triton.cdiv is a ConstexprFunction in Triton 3.6 and 3.8 (seen in both): 2.1 us a
    call on the CPU machine (triton 3.8) against 0.03 for this, and a staged relaunch called it six times (session
    21, run 2)."""
    return -(-a // b)


TILE_PARAMS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "SPLIT_K", "TAIL")
LAUNCH_PARAMS = ("num_warps", "num_stages")

# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps[, GROUP_M=8]). Measured on an H100
# (notes/NOTES.md): 128x256 tiles win large shapes by ~10% in every family (TMA path), and
# GROUP_M moves the 16-bit winner by up to 6%, so it varies there; the small tiles serve
# small M or N, where a big tile leaves SMs idle. About ten configs keep a cold tune near 12 s.
# 16-bit, session 7 (run 1, notes/experiments/landscape.py, 14 configs pinned on 8 shapes): GROUP_M
# 4 never led 16 or 8 by more than 1%, and gave its place to 128x128x64 with 6 stages (best at
# 512x4096x14336, 0.98x cuBLAS against 0.95 with 5); 64x256x64 on 4 warps was best at 3000x3008x3000
# (0.82 against 0.80), where the 128-row tiles leave a third wave mostly empty.
# Session 11 (run 3, notes/experiments/midsize.py, 28 configs pinned on each path, bf16, graph replay,
# operands rotated past the L2): 64x128x64 and 128x64x64 with 6 stages instead of 4 ran 768^3 at 0.82-0.83x
# cuBLAS (the space's best 0.77) and 1024^3 at 0.89-0.90 (0.80), on either path: a K loop of 12-16 steps
# from HBM-cold operands needs more loads in flight; s4 led nowhere s6 did not. BLOCK_K 128 with 3 stages,
# 2-stage 128x128 tiles (two programs an SM) and 64x64x64 tiles did not lead; 1536^3 stayed at 0.71.
# Run 7 (midsize.py deep): 64x128x128 with 4 stages on the TMA kernel led at 768^3 (0.88), 1024^3 (0.96)
# and 1280^3 (0.84, where 128x128x64 s5 ran 0.97 in run 3); 7-8 stages, 8 warps and GROUP_M 1-4 moved
# the 6-stage tiles by at most 2%.
# Session 16 (run 3, notes/experiments/tall_tiles.py, bf16, TMA kernel, graph replay, rotated operands, x cuBLAS):
# 256x128 tiles, for tall products whose N leaves a 256-wide tile mostly empty: 8192x272x4096 0.51 -> 0.70 (96
# tiles against 128 half-empty ones of 128x256), 5728x272x1120 x @ W.T 0.66 -> 0.70, 6000x400x2000 0.78 -> 0.80;
# slower than the space at 1536^3, 4096^3 and wherever N is large, so the tuner alone gives it, on the TMA kernel
# alone (TUNED_TMA_ONLY). 256x64 led only at 5728x272x1120 (0.73).
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
    # tf32x3 on operands split before the kernel (plan.py; kernels/gemm_tma.py, PRESPLIT): four
    # float32 tiles a K step (both parts of A and of B) and two fp32 accumulators (the step's
    # sum and the total), which keep tiles at 128x128 per 8 warps. 128x128x32 with 3 stages
    # (225 KB with the C half tile) ran 95.6-96.6 TFLOP/s at 4096^3 and 96.4 at 8192^3 on the
    # H100; BLOCK_K 16 with 5 stages 72-74 (session 5, device call 4, notes/NOTES.md).
    "tf32x3-split": [
        (128, 128, 32, 3, 8), (128, 128, 32, 3, 8, 4), (128, 128, 32, 3, 8, 16), (128, 128, 16, 5, 8),
        (128, 128, 32, 2, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (64, 64, 32, 4, 4),
    ],
    # FP8 (scaled_mm): 1-byte operands, so K tiles of 128 for the same bytes per step as 16-bit
    # ones of 64; wgmma takes FP8 from shared memory K-major (plan.py stages B so).
    "fp8": [
        (128, 256, 128, 3, 8), (128, 256, 128, 4, 8), (128, 256, 128, 3, 8, 4), (256, 128, 128, 3, 8),
        (128, 128, 128, 4, 8), (128, 128, 128, 4, 4), (64, 128, 128, 4, 4), (64, 64, 128, 4, 4),
    ],
    "ieee": [
        (128, 128, 16, 3, 8), (128, 128, 32, 3, 8), (128, 128, 32, 2, 8), (128, 64, 32, 3, 4), (64, 128, 32, 3, 4),
        (64, 64, 32, 3, 4), (128, 256, 16, 2, 8),
    ],
}


# Narrow tiles, offered only where 64x64 tiles leave SMs idle (narrow()): decode products stream the
# weight through more programs without split-K's second pass. Session 8, run 1 (bf16, x @ W.T, graph
# replay, weights rotated past the L2, notes/experiments/thin_products.py): 64x32x256 with 4 stages
# and 4 warps ran 64x4096x14336 at 1.00x cuBLAS and 64x4096x4096 at 0.98, where the tuner's pick,
# 64x64x128, ran 0.89 and 0.90 (its split-K 2 variant 0.98 and 0.90).
_NARROW = {
    "16bit": [(64, 32, 256, 4, 4)],
}


# Short tiles, offered on the TMA kernel to products of at most SHORT_MAX_ROWS rows (short()), where a 64-row
# tile would be mostly past A's last row. TMA fills a box's rows past the tensor with zeros, and on an H100 that
# fill cost about as much as reading the rows: session 22, run 9 (notes/experiments/cold_tuning.py, bf16 x @ W.T,
# graph replay over weights rotated past the L2, read-flushed, x cuBLAS) timed 64x64x128 at 32.1 us on 12x5120x5120
# against 24.0-24.3 us at 52 and 64 rows, the same weight bytes. 16-row tiles (tl.dot then runs mma.sync instead of
# wgmma, which a product bound by reading its weight does not miss) ran 12x5120x5120 0.88 -> 0.94 (16x64x256, 5
# stages), 14x8192x8192 0.95 -> 0.99, 12x8192x8192 0.96 -> 0.99, 16x14336x4096 0.97 -> 0.99, 32x5120x13824 1.00 ->
# 1.01 (16x128x128, 6 stages; two row tiles), where "->" is the tuned pick against the best short tile; at 52 and
# 64 rows (four row tiles, the weight read once each) they ran 0.57-0.62, and 32-row tiles lost everywhere.
_SHORT = {
    "16bit": [(16, 64, 256, 5, 4), (16, 128, 128, 6, 4), (16, 64, 128, 8, 4)],
}
SHORT_MAX_ROWS = 32


# One-row products (kernels/gemv.py): configs with BLOCK_M = 1 run the one-row kernel, BLOCK_N columns
# of C a program, K in BLOCK_K chunks on the FMA units; (BLOCK_N, BLOCK_K, num_stages, num_warps).
# Offered where B runs along K (x @ W.T: the weight's rows are read in long contiguous runs). Session 9,
# runs 1-2 (bf16, M = 1, graph replay, weights rotated past the L2; notes/experiments/gemv_stream.py,
# one_row.py): 8x512 on 4 warps streamed 4096x14336, 14336x4096 and 4096x4096 weights at 1.03 / 1.00 /
# 1.13x cuBLAS, 82-83% of the read bandwidth on the large two (a Triton read of the same bytes: 86-87%);
# 8x1024 on 8 warps 1.00 / 1.03 / 1.11 (85% at 14336x4096); 4x1024 with 3 stages within 4% of 8x512;
# 2x2048 and 16x256 up to 20% slower. The tensor-core tiles ran 1.00 / 0.97 / 1.07 there. For a B that
# runs along N (x @ W), 8x512 ran 0.61-0.77x cuBLAS and 64-256 columns a program 0.03-0.36x (strided
# reads), where the pointer kernel's tiles ran 0.98-1.01x: not offered.
_GEMV = [(8, 512, 1, 4), (8, 1024, 1, 8), (4, 1024, 3, 4)]


def gemv_space() -> list:
    """The one-row kernel's configs (BLOCK_M = 1), for a B contiguous along K."""
    return [make_config(1, bn, bk, stages, warps) for bn, bk, stages, warps in _GEMV]


def is_gemv(cfg: triton.Config) -> bool:
    """Whether cfg runs the one-row kernel (BLOCK_M = 1) instead of a tensor-core tile."""
    return cfg.kwargs["BLOCK_M"] == 1


def one_row(M, N, Z, num_sms, k_contiguous: bool):
    """The heuristic's config for a product of one row of C per batch entry, B contiguous along K:
    the one-row kernel when its programs (BLOCK_N columns each) cover every SM; None otherwise (few
    columns and long K, which the tensor-core tiles split over K; or B contiguous along N)."""
    if M != 1 or not k_contiguous:
        return None
    cfg = gemv_space()[0]
    return cfg if Z * cdiv(N, cfg.kwargs["BLOCK_N"]) >= num_sms else None


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
    16. Shapes in one bucket share a tuned config. Whole octaves put 3072^3 and 4096^3 in one
    bucket: the config tuned at 3072^3 (128x128, a wave-tail split) ran 4096^3 at 0.90-0.93x
    cuBLAS against 1.02-1.05 for 128x256 (session 7, runs 1 and 3; sessions 5-6 saw the same)."""
    p = bucket(n)
    return p * 3 // 4 if p >= 32 and n <= p * 3 // 4 else p


def tuning_shape(M: int, N: int, K: int) -> tuple:
    """A product's shape as tuning keys hold it: each dimension's tuning_bucket (M = 1 apart: one row
    tunes to the one-row kernel, which would run 16 rows 16 times over), and whether K leaves a
    partial last step of 64 (the spaces' common BLOCK_K), which keys apart the shapes that do.
    A config tuned at 3072^3 is not one for 3000x3008x3000: its 128x128 tiles ran that 23% slower
    than 3072^3 (other tiles not; session 7, run 1), and the bf16 sweep of session 8 (run 5), where
    3072^3 tuned to them first, ran 3000x3008x3000 at 0.73x cuBLAS (0.87-0.88 on its own tuning)."""
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


# The pointer kernel's largest tile for the heuristic. Tuned on 1024 and 4096 x 16384 x 4096
# bf16 (x @ W.T) on the H100, 64x128x64 (4 warps, 4 stages) ran at 302-312 TFLOP/s and the
# 128x256x64 tile the heuristic chose before at 127-130 (notes/NOTES.md, run 15).
POINTER_MAX_TILE = 64 * 128

# Configs measured on the TMA kernel only (session 11, run 7), which the heuristic does not give the
# pointer kernel: 64x128x128 would win its tie-break (BLOCK_K) there, over tiles measured on that path.
TMA_ONLY = {(64, 128, 128, 4, 4)}

# Configs only the tuner gives, and only on the TMA kernel: 256x128 led only on tall products whose N leaves a
# wider tile mostly empty (session 16, run 3) and lost where N is large, which the heuristic's rule (the largest
# tile that fills the SMs) would give it (520x6144: 144 tiles against 120 of 128x256). The tuner is offered it
# only where N's last 256-wide column of tiles is at most half full (tall_tile_serves): tuned L2-warm, it took
# 4096^3 and ran it at 0.88x cuBLAS in the sweep's graph replay over rotated operands, where 128x256 had run
# 0.98 (session 17, run 3; session 16's run 3: 0.95 against 1.01).
TUNED_TMA_ONLY = {(256, 128, 64, 4, 8)}


def _key(c: triton.Config) -> tuple:
    k = c.kwargs
    return k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], c.num_stages, c.num_warps


def _tma_only(c: triton.Config) -> bool:
    return _key(c) in TMA_ONLY


def tuned_tma_only(c: triton.Config) -> bool:
    """Whether c is one of TUNED_TMA_ONLY: timed by the tuner on the TMA kernel, never the heuristic's pick."""
    return _key(c) in TUNED_TMA_ONLY


def tall_tile_serves(N: int) -> bool:
    """Whether 128-wide tiles cover N with less padding than 256-wide ones (N of 272: 384 against 512
    columns; N of 400 or 4096: the same), where the tuner times TUNED_TMA_ONLY's tall tile."""
    return cdiv(N, 128) * 128 < cdiv(N, 256) * 256


# Split-K (kernels/gemm.py, pointer path): a product with fewer tiles than SMs leaves SMs idle,
# and decode products (M of 1-64 against a 4096-wide weight: 64 tiles of 64x64 for 132 SMs) are
# bound by how much of the weight is in flight. Slices of K give every SM a program. Each slice
# keeps at least MIN_SPLIT_STEPS K steps, so the pipeline (4 stages) has something to overlap,
# and at most MAX_SPLIT_K slices: the fp32 workspace and the second pass grow with the count.
MAX_SPLIT_K = 16
MIN_SPLIT_STEPS = 4


def split_for(tiles: int, k_steps: int, num_sms: int) -> int:
    """The fewest slices of K (a power of two) that give every SM a program; 1 when the tiles
    already do, or when K is too short to split."""
    split = 1
    while tiles * split < num_sms and split < MAX_SPLIT_K and k_steps // (2 * split) >= MIN_SPLIT_STEPS:
        split *= 2
    return split


def _split_of(cfg: triton.Config, M, N, K, num_sms) -> int:
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
        split = _split_of(c, M, N, K, num_sms)
        if split > 1:
            for s in (split, 2 * split):
                if s <= MAX_SPLIT_K and k_steps // s >= MIN_SPLIT_STEPS:
                    out.append(make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(k, SPLIT_K=s)))
    return out


# Split-K on the TMA kernel (kernels/gemm_tma.py): where a config's tiles leave most SMs idle in their
# last wave and K is long, each tile runs as SPLIT_K slices of K, slice-major. The fp32 workspace costs its
# bytes twice (written, then read by the second pass), so it pays only where it is small beside the
# operands: products that stream a large weight past a few hundred rows. Session 20, run 1
# (notes/experiments/tma_split_k.py, bf16 x @ W.T, graph replay over rotated operands, x cuBLAS, best unsplit /
# best split): 134x5120x13824 0.84 / 0.96 (128x256 in 3 slices: 120 units for 40 tiles; workspace 5.7% of the
# operands' bytes), 288x8192x28672 0.73 / 0.78 (4 slices, 7.7%); it lost wherever the workspace was 19% or more:
# 149x8192x3072 0.83 / 0.75 (19%), 284x5120x5120 0.78 / 0.77 (21%), 227x5120x5120 0.89 / 0.78, 487x5120x5120
# 0.76 / 0.67, 577x5120x13824 0.82 / 0.72, 4096^3 0.99 / 0.69 (2 slices of 512 tiles). cuBLAS itself ran
# split-K (splitKreduce_kernel) at 134x5120x13824 alone of those 14 shapes.
TMA_SPLIT_MAX_WORKSPACE = 0.1  # the workspace's bytes, at most this fraction of A's and B's
TMA_SPLIT_MIN_FILL = 0.9  # the fewest slices whose units fill at least this much of their waves
TMA_SPLIT_MIN_STEPS = 16  # K steps a slice, at least: a unit's fp32 store must be short beside its K loop


def _fill(units: int, num_sms: int) -> float:
    """How full the waves of ``units`` programs are on num_sms SMs."""
    return units / (num_sms * cdiv(units, num_sms))


def tma_split_for(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, elem_bytes, num_sms) -> int:
    """Slices of K for a TMA tile of BLOCK_M x BLOCK_N: the fewest (2 to MAX_SPLIT_K) whose units fill
    TMA_SPLIT_MIN_FILL of their waves, where the whole tiles fill less, each slice keeps TMA_SPLIT_MIN_STEPS
    K steps and the fp32 workspace stays within TMA_SPLIT_MAX_WORKSPACE of the operands; else 1."""
    tiles = cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)
    if _fill(tiles, num_sms) >= TMA_SPLIT_MIN_FILL:
        return 1
    operands = (M + N) * K * elem_bytes
    for split in range(2, MAX_SPLIT_K + 1):
        too_short = cdiv(K, BLOCK_K) // split < TMA_SPLIT_MIN_STEPS
        if too_short or split * M * N * 4 > TMA_SPLIT_MAX_WORKSPACE * operands:
            return 1
        if _fill(tiles * split, num_sms) >= TMA_SPLIT_MIN_FILL:
            return split
    return 1


def with_tma_split(cfgs, M, N, K, elem_bytes, num_sms) -> list:
    """cfgs, the first config of each tile shape followed by its split-K variant where tma_split_for splits."""
    out, seen = [], set()
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        shape = (k["BLOCK_M"], k["BLOCK_N"])
        if shape in seen:
            continue
        seen.add(shape)
        split = tma_split_for(M, N, K, *shape, k["BLOCK_K"], elem_bytes, num_sms)
        if split > 1:
            out.append(make_config(num_warps=c.num_warps, num_stages=c.num_stages, **dict(k, SPLIT_K=split)))
    return out


# Wave-tail split (TMA path, 16-bit): the persistent kernel runs cdiv(tiles, SMs) rounds of tiles, so
# a last wave holding few tiles costs a whole round. With TAIL, the rows whose tiles fill whole waves
# run on the config's tiles and the rest in a second launch of small tiles that spreads over every
# SM. Measured on the H100 (session 7, run 1, notes/experiments/landscape.py, bf16, x cuBLAS): 3072^3
# 128x256 0.78 -> 0.93 with its last 256 rows on 64x128 tiles (the best single config 0.92);
# 3000x3008x3000 0.80 -> 0.91 (best single 0.82); 1536^3 128x128 0.65 -> 0.73 with 64x64x128 tiles
# (best single 0.70). Where the last wave was half full or more it lost: 2560^3 (1.5 waves) 0.99 ->
# 0.85, 6144^3 (8.7 waves) 0.99 -> 0.95-0.99. So it is a tuner variant only where the last wave holds
# at most TAIL_MAX_FILL of the SMs, of one config per tile shape of 128 rows or more.
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


def tail_config(rows, N) -> triton.Config:
    """The tile of a wave-tail launch over ``rows`` rows: 64x128 where those tiles fill half the SMs,
    else 64x64 (the better of the two in each of session 7's three measured tails)."""
    wide = cdiv(rows, 64) * cdiv(N, 128) >= 66
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


def heuristic(M, N, K, dtype, precision, num_sms, elem_bytes, smem_limit, tma, matrix_bias=False,
              can_split=False, out_bytes=None, split_operands=False) -> triton.Config:
    """A config chosen from the shape alone, for TRITONMM_AUTOTUNE=0, the CPU interpreter and
    compiled graphs: among the configs that fit, the largest tile that still gives every SM a
    tile (on the pointer kernel, at most POINTER_MAX_TILE elements; on the TMA kernel, a short
    tile for products of few rows), split over K where the tiles cannot fill the SMs and ``can_split``."""
    space_ = [c for c in configs(dtype, precision, split_operands) if not tuned_tma_only(c)]
    if tma:  # products of few rows: short tiles alone, as measured (_SHORT)
        space_ = short(family(dtype, precision, split_operands), M) or space_
    kept, _ = prune(space_, M, N, K, elem_bytes, smem_limit, tma, matrix_bias, out_bytes)
    kept = [c for c in kept if tma or (c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= POINTER_MAX_TILE
                                       and not _tma_only(c))] or kept
    kept = kept or space_[-1:]

    def score(c):
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        tiles = cdiv(M, bm) * cdiv(N, bn)
        return (min(tiles, num_sms), bm * bn, c.kwargs["BLOCK_K"], c.num_warps)

    best = max(kept, key=score)
    split = _split_of(best, M, N, K, num_sms) if can_split else 1
    return best if split == 1 else make_config(num_warps=best.num_warps, num_stages=best.num_stages,
                                               **dict(best.kwargs, SPLIT_K=split))


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
