"""One product -> kernel path, config, grid and arguments, launched on its operands' device.

``product(a, b, ...)`` is the one entry point below the public API: act(a @ b + bias) for 2-D
operands (FP8 ones with their scales), or for 3-D ones a batch of products in one launch. It
decides the precision's constants, picks the kernel path (tma_path: TMA descriptors for large
products, operands TMA cannot read staged into aligned copies when that pays; pointers
otherwise, or for one-row products the one-row kernel, kernels/gemv.py, where a config of
BLOCK_M = 1 says so; either tiled kernel split over K where the tuner finds it faster), asks
tuning.py for a config unless one is pinned, and launches on the operands' device. A product
seen before is relaunched from a cache (relaunch, _relaunch). Checks live in validation.py, tile
spaces in config_space.py.

Under torch.compile the same code is traced with fake tensors (library.py registers it
through ``torch.library.triton_op``): nothing is benchmarked, pointer-kernel launches go
through ``wrap_triton``, and a product that would take the TMA kernel or split K is left to run
when the graph runs, through the opaque operator tritonmm::eager_product (host-side descriptors
do not trace in torch 2.11-2.14; a traced product keeps one launch). Callers check arguments
first (validation.py, override.py).
"""
import math
import sys
import types
from typing import NamedTuple

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from . import config_space, device, fast_launch, tuning, validation
from .kernels.gemm import gemm_kernel
from .kernels.gemm_tma import fit_descriptors, gemm_tma_kernel
from .kernels.gemv import gemv_kernel
from .kernels.split_k import split_k_reduce_kernel
from .kernels.copy import copy_kernel

cdiv = config_space.cdiv


@torch.compiler.assume_constant_result  # torch.compile reads the flag when it traces, as for torch.mm
def torch_uses_tf32() -> bool:
    """Whether torch.mm would run a float32 product on TF32 tensor cores right now."""
    matmul_flags = torch.backends.cuda.matmul
    precision = getattr(matmul_flags, "fp32_precision", None)  # torch >= 2.9
    if precision in ("tf32", "ieee"):
        return precision == "tf32"
    try:
        return bool(matmul_flags.allow_tf32)
    except RuntimeError:  # torch refuses to read the legacy flag once both APIs were used
        return torch.get_float32_matmul_precision() != "highest"


# tritonmm.set_float32_precision's choice for float32 products that name no precision; None
# follows torch.mm's own setting.
_float32 = {"precision": None}


@torch.compiler.assume_constant_result  # read once when torch.compile traces, like torch's flag
def float32_default() -> str:
    """The precision of a float32 product that names none: the process-wide choice, else torch.mm's."""
    chosen = _float32["precision"]
    if chosen is not None:
        return chosen
    return "tf32" if torch_uses_tf32() else "ieee"


def resolve_precision(dtype: torch.dtype, input_precision) -> str:
    """'native' for 16-bit inputs; for float32, 'ieee', 'tf32' or 'tf32x3': as asked, else the
    process-wide default (float32_default)."""
    if dtype != torch.float32:
        return "native"
    if input_precision is not None:
        return input_precision
    return float32_default()


# Products of at least this many multiply-adds take the TMA kernel when their operands allow.
# Session 2 set 2**35 from host time, when the TMA path rebuilt descriptors and bound every
# argument each call (87-125 us at 64^3). With both paths relaunched directly (fast_launch.py),
# session 3 forced each path, tuned, on 36 bf16 shapes (notes/experiments/tma_threshold.py,
# H100): from about 2**31 (2048x1024x1024, 128x4096x4096) the TMA kernel ran 1.4-7x the pointer
# kernel for x @ W.T and for K not a multiple of 64 (3000x3008x3000: 339 vs 54 TFLOP/s), and
# 0.98-1.16x for the other aligned row-major cases, with outliers re-checked by the sweep.
TMA_MIN_MACS = 2 ** 31

# Inside CUDA-graph capture no host time is paid when the graph replays, so the host cost of a launch
# does not count, and the TMA kernel takes products from TMA_MIN_MACS / CAPTURED_TMA_DIVISOR.
# In graph replay, operands rotated past the L2 (session 7, run 5, bf16, tuned, x cuBLAS; pointer /
# TMA): 1024^3 0.80 / 0.80, 1280^3 0.81 / 0.94 (L2-warm, session 6: 1024^3 0.87 / 0.95). Session 11
# (runs 3 and 7, notes/experiments/midsize.py, pinned): at 768^3 (2**28.75) the best TMA config ran 0.88x
# cuBLAS and the best pointer one 0.82 (session 6, L2-warm: 0.77-0.79 / 0.75-0.76), so captured products
# take the TMA kernel from 2**28. Eagerly both launches now cost about the same host time (fast_launch.py),
# but below 2**31 either path is host-bound and neither led consistently (session 11, run 3,
# notes/experiments/eager_paths.py: TMA ahead at 1280^3, 1-3 us behind at 512^3-1024^3 and
# 128x4096x4096), so eager calls keep TMA_MIN_MACS.
CAPTURED_TMA_DIVISOR = 8

# Operands TMA cannot read (rows not 16-byte aligned: a bf16 row of 3001 elements) are copied
# into aligned buffers when the product does at least this many multiply-adds per byte the
# copies move (read and write of each staged operand), as torch's
# pad_mm decides: only products that gain enough on the TMA kernel pay back the copies. Sessions 3-11
# held 40, from the pointer kernel's ~110 TFLOP/s on unaligned rows at 3000x3001x2999; on thinner
# products it runs far slower (22-80 TFLOP/s: session 12, runs 3-4). Session 12,
# run 4 (notes/experiments/row_alignment.py, bf16, graph replay, rotated operands) staged by force the
# unaligned products under 40: staged / pointer 68.2 / 85.7 us at 150x5938x3242 (35 per byte), 34.4 /
# 38.3 at 1724x182x4786 x @ W.T (40), 16.1 / 19.5 at 751x3247x185 (35), 29.4 / 30.2 at 77x4099x2049 (18,
# the lowest measured, still ahead). Eagerly, STAGE_EAGER_MIN_MACS decides besides.
STAGE_MIN_MACS_PER_BYTE = 16

# Where the pointer kernel would read every operand at least WIDE_READ_BYTES at a time (rows 8-byte aligned:
# a bf16 K of 4 mod 8), it runs far nearer the TMA kernel than on 2-byte reads, and staging pays only from
# STAGE_MIN_MACS_PER_BYTE_WIDE_READS. Session 19, run 5 (notes/experiments/wide_read_staging.py, bf16, graph
# replay over rotated operands, copies included, x torch.mm; staged for TMA / the pointer kernel on the
# caller's operands; multiply-adds per staged byte): 3027x70x2332 x @ W.T (17) 0.73 / 0.86, 5124x140x244 (34)
# 1.15 / 1.47; 300x4100x2052 x @ W.T (70) 1.35 / 1.16, 1020^3 (128) 1.36 / 1.17, 700x3068x1500 x @ W.T (142)
# 2.29 / 1.30, 2044^3 (256) 1.64 / 1.44, 4092^3 (512) 2.03 / 1.41. The staged / pointer time ratio, 1.28 at 34
# and 0.86 at 70, crosses 1 near 53 when interpolated in log intensity. 4-byte reads were not measured: 16.
WIDE_READ_BYTES = 8
STAGE_MIN_MACS_PER_BYTE_WIDE_READS = 50

# Eagerly, a staged product pays on the host for its copies' launch, their two buffers and the product's
# launch: about 36-41 us a call of wall time where the device is not the bound, against 14-25 us on the pointer
# kernel (session 21, run 3, notes/experiments/eager_staging.py: bf16, eager back-to-back calls over operand
# copies rotated past the L2, 3 interleaved rounds, x torch.mm, unstaged / staged): 97x70x786 x @ W.T
# 0.90 / 0.39, 910x1182x350 0.67 / 0.32, 77x4099x2049 x @ W.T (0.65 G multiply-adds) 0.87 / 0.62,
# 251x2404x1555 (0.94 G) 0.97 / 0.85, 1023x1025x1027 (1.08 G) 0.84 / 0.87 (0.74 staged in run 5's sweep: a tie
# within the host's noise); from 2 G up the pointer kernel's 2-byte reads cost more than the staged call:
# 700x1800x2046 x @ W.T (2.6 G) 0.77 / 1.12, 1500x1501x1499 1.19 / 2.08, 2047x2049x2051 1.02 / 1.68 (1.66 in run
# 5's sweep). So eager calls stage only products of at least this many multiply-adds (2**34 until session 20,
# from session 4's 109-269 us staged calls: one launch per copy, every argument bound by Triton); inside a CUDA
# graph, the intensity rule alone decides.
STAGE_EAGER_MIN_MACS = 2 ** 31

# Products on the pointer kernel (few tiles, which split-K spreads; or under the TMA bar in a graph) whose
# 16-bit operands it reads at most this many bytes at a time (rows not 16-byte aligned, or a contiguous dim whose
# size splits the masks: plan._load_bytes) run on K-major copies whose K is zero-padded to a multiple of 16
# bytes, read 16 bytes at a time. 2-byte reads are no asynchronous copies (cp.async moves 4, 8 or 16 bytes:
# ASYNC_COPY_MIN_BYTES), so the pipeline stalls on them, and they are staged always.
# Session 15, run 2 (notes/experiments/pointer_staging_ab.py, bf16, graph replay, operands rotated past the
# L2, x torch.mm, off / on): with 2-byte reads 333x138x2569 x @ W.T 0.47 / 0.93, 64x1000x3001 0.46 / 0.99,
# 110x2068x1253 0.94 / 1.09, and unseen 257x515x1031 0.67 / 1.32, 500x250x777 (A transposed) 0.93 / 1.30,
# 2000x100x999 0.97 / 1.07. 4-byte reads are staged where the copies pay (POINTER_STAGE_MIN_MACS_PER_BYTE,
# POINTER_STAGE_SMALL_BYTES). Eagerly, STAGE_EAGER_MIN_MACS decides besides (a copy's launch is host time).
# Memory: a copy of A and of B, rows padded, for the call. 0: never.
POINTER_STAGE_MAX_LOAD_BYTES = 4
ASYNC_COPY_MIN_BYTES = 4

# 4-byte reads are staged where the product does at least this many multiply-adds per byte the copies move
# (read and write of each staged operand), or where the copies move at most POINTER_STAGE_SMALL_BYTES.
# Session 17, run 1 (notes/experiments/stage_breakdown.py, bf16, graph replay, operands rotated past the L2,
# cold tuning, x torch.mm; 2-byte reads staged only / 4-byte too; multiply-adds per staged byte, copies):
# 93x529x6074 x @ W.T 0.58 / 0.95 (20 per byte, 15.1 MB), 130x520x6002 x @ W.T 0.66 / 0.92 (26, 15.6 MB),
# 2000x90x1506 x @ W.T 0.76 / 0.82 (22, 12.6 MB), 300x214x3000 0.41 / 0.89 (75: B alone, 2.6 MB), 512x382x1030
# 0.76 / 1.01 (55, 3.7 MB); but 48x4100x2050 x @ W.T 0.89 / 0.70 (12 per byte: the copies of a 16.8 MB weight took
# 14.1 us, the product on the caller's operands 17.1).
POINTER_STAGE_MIN_MACS_PER_BYTE = 16

# Copies of at most this many bytes cost about a launch (copy_kernel in session 17, run 1: 2.4 us for 0.5 MB,
# 3.3-3.4 us for 2.6-3.7 MB, 6.9 us for 12.6 MB), and the pointer kernel's 4-byte reads cost more than that
# already: 97x70x786 x @ W.T (10 multiply-adds per staged byte, 0.5 MB) ran 0.30 / 0.66x torch.mm unstaged /
# staged, its product 14.4 / 5.5 us.
POINTER_STAGE_SMALL_BYTES = 2 ** 22


def _tma_source(t: torch.Tensor):
    """(matrix whose last dim is contiguous, whether it is t transposed), or None when TMA
    cannot read t: it needs a 16-byte aligned base and 16-byte aligned row strides."""
    size = t.element_size()
    if t.data_ptr() % 16:
        return None
    if t.stride(1) == 1 and t.stride(0) * size % 16 == 0:
        return t, False
    if t.stride(0) == 1 and t.stride(1) * size % 16 == 0:
        return t.T, True
    return None


# tf32x3 products on the TMA kernel split their operands first when they do at least this many
# multiply-adds per byte the split moves (12 per element of A and B: read 4, write both parts).
# Estimated, not measured at the boundary: the split path ran 93-98 TFLOP/s at 4096^3-8192^3
# against 88-91 for tl.dot's in-register split (sessions 4-5), about 8% of a product at ~95
# TFLOP/s, which pays for copies at 2.7 TB/s from about 75 multiply-adds per byte (4096^3: 171).
TF32X3_SPLIT_MIN_MACS_PER_BYTE = 100

# Products with at most this many 64x64 output tiles per SM take the pointer kernel, where
# split-K spreads them over the GPU (decode: M of 1-64 against a 4096-wide weight has 64 tiles
# for 132 SMs). The sweep's thin products with 128 tiles (M = 128, or N = 64 with M = 8192)
# ran at 0.98-1.01x cuBLAS on the TMA kernel (session 3), so they stay there.
FEW_TILES_PER_SM = 0.5


# Products of fewer rows stay on the pointer path, whose one-row kernel (kernels/gemv.py) the tuner
# and heuristic pick for one row: a TMA tile of 64 rows would be 63/64 padding there.
TMA_MIN_ROWS = 2

# The TMA kernel moves the last tile of each row and column of C back to end at C's edge, so no box reaches
# past an operand's end (kernels/gemm_tma.py, SHIFT). Session 23, run 1 (notes/experiments/row_shift.py, H100,
# bf16, every candidate timed in graph replay over rotated operands, best off -> on, x cuBLAS): 6912x1104x464
# 0.87 -> 0.95, 141x3072x8192 x @ W.T 0.76 -> 0.81, 100x4096x4096 x @ W.T 0.86 -> 0.90 (128x128x64 at
# 1027x3072x3072: 42.7 -> 37.3 us); 4096^3 (no ragged tiles) 0.994 -> 0.997; six other ragged shapes within
# -0.016 to +0.008. Off only for experiments and tests (a setting: assigning it empties the relaunch cache, SETTINGS).
TMA_SHIFT = True

# Programmatic dependent launch: the tiled kernels, split-K's sum, the one-row kernel and the staging copies are
# launched with launch_pdl=True and wait for their predecessor in the stream inside the kernel, so a launch's
# scheduling and set-up overlap the end of the kernel before it (measured: kernels/tiles.py). On Hopper (sm_90+),
# on real tensors (not under torch.compile's tracing, whose launches take no such option), compiled (not in
# Triton's interpreter). Off only for experiments and tests (a setting, SETTINGS).
PDL = True

# copy_kernel's tile is COPY_BLOCK x COPY_BLOCK elements, or COPY_SMALL_BLOCK x COPY_SMALL_BLOCK where the larger
# tile would give fewer than COPY_MIN_PROGRAMS_PER_SM programs an SM: a copy of few large tiles leaves each SM a few
# programs of 4 warps, too few loads in flight to cover the memory's latency. Session 26, run 2
# (notes/experiments/settings_ab.py, bf16, graph replay over operands rotated past the L2, 3 interleaved rounds,
# staged products whole, us; 64x64 -> 32x32 copy tiles): 1023x1025x1027 17.41 -> 15.96 (1.80 -> 1.96x torch.mm;
# the copies, 544 programs of 64x64, took 5.7 us of 17 in run 1), 1000x1004x1012 13.88 -> 12.49, 512x382x1030
# (K-major copies, 238 programs) 10.42 -> 9.74; 93x529x6074 x @ W.T (1045 programs, 7.9 an SM) 19.12 -> 19.43, so
# the bar sits below 7.9. Copies of 2112 programs or more unchanged (2047x2049x2051 54.40 / 54.38). Run 3, this bar
# on shapes not seen before: 1531x777x913 15.94 -> 14.88 (2.02 -> 2.17x), 2500x900x700 20.63 -> 18.69, 300x2050x1030
# x @ W.T 13.14 -> 12.75, 1111^3 16.32 -> 16.13. TF32 splits and FP8 K-major copies take the same rule, unmeasured.
COPY_BLOCK = 64
COPY_SMALL_BLOCK = 32
COPY_MIN_PROGRAMS_PER_SM = 6


def _pdl(facts, traced: bool) -> bool:
    """Whether this product's launches use programmatic dependent launch (PDL)."""
    return PDL and facts.tma and not traced and not validation.interpreting()


def _options(pdl: bool, num_warps: int, num_stages: int | None = None) -> dict:
    """A launch's options: its warps and stages, and launch_pdl where the kernel waits for its predecessor."""
    options = dict(num_warps=num_warps) if num_stages is None else dict(num_warps=num_warps, num_stages=num_stages)
    if pdl:
        options["launch_pdl"] = True
    return options


def _few_tiles(facts, M, N) -> bool:
    return cdiv(M, 64) * cdiv(N, 64) <= FEW_TILES_PER_SM * facts.num_sms


def tma_path(facts, M, N, K, staged_bytes: int, captured: bool = False, read_bytes: int = 2) -> bool:
    """The kernel path rule, in one place: the TMA kernel on Hopper for products of more than one
    row whose tiles fill the GPU, when large (aligned operands; ``captured``: launched into a CUDA
    graph, where large starts lower), or when compute-bound enough to pay for staging what TMA
    cannot read (``staged_bytes``: what the copies move, 0 when none is needed; ``read_bytes``: the
    narrowest read the pointer kernel would make of the operands instead, plan._load_bytes)."""
    macs = M * N * K
    if not facts.tma or M < TMA_MIN_ROWS or _few_tiles(facts, M, N):
        return False
    if staged_bytes:  # unaligned rows: the pointer kernel is slow on narrow reads, so intensity decides (and host time)
        bar = STAGE_MIN_MACS_PER_BYTE_WIDE_READS if read_bytes >= WIDE_READ_BYTES else STAGE_MIN_MACS_PER_BYTE
        return macs >= bar * staged_bytes and (captured or macs >= STAGE_EAGER_MIN_MACS)
    return macs >= (TMA_MIN_MACS / CAPTURED_TMA_DIVISOR if captured else TMA_MIN_MACS)


def capturing(t: torch.Tensor) -> bool:
    """Whether t's device stream is being captured into a CUDA graph now."""
    return t.device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def _copy_bytes(t: torch.Tensor) -> int:
    """Bytes a staging copy of t moves: each element read and written once (padding aside)."""
    return 2 * t.numel() * t.element_size()


def _c_descriptor(c: torch.Tensor) -> bool:
    """Whether the TMA kernel stores c through a tensor descriptor: row-major (the kernel's store) with
    16-byte aligned rows; else through pointers (kernels/gemm_tma.py, C_DESC)."""
    return _tma_source(c) is not None and c.stride(1) == 1


# Staged buffers' rows are padded to a multiple of this many elements: 16 bytes or more, as TMA needs,
# and a row stride that Triton specializes as divisible by 16, so copy_kernel moves 16 bytes an access
# on the buffer's side (a stride of 4104 = 8 * 513 elements left every access at 2 bytes; PTX for sm_90).
ROW_PAD = 16


def _aligned_empty(rows, cols, like: torch.Tensor) -> torch.Tensor:
    """A (rows, cols) row-major view of a new buffer whose rows start a multiple of ROW_PAD elements
    apart (16-byte aligned rows: TMA's rule)."""
    # new_empty_strided: 1 us on the CPU machine against 3.4 for torch.empty and a slice (each staged call makes two)
    return like.new_empty_strided((rows, cols), (cdiv(cols, ROW_PAD) * ROW_PAD, 1))


def _aligned_like(t: torch.Tensor) -> torch.Tensor:
    """A new buffer of t's shape that TMA can read, in t's own orientation (a transposed view stays
    one, so a copy into it is a plain strided copy, not a transpose)."""
    if t.stride(0) == 1 and t.stride(1) != 1:
        return _aligned_empty(t.shape[1], t.shape[0], t).T
    return _aligned_empty(*t.shape, t)


def _aligned_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """t copied into a buffer TMA can read (_aligned_like)."""
    return copy(t, _aligned_like(t), traced)


def _stage(stagers, a, b, traced: bool = False) -> tuple:
    """a and b through their stagers (None: as they are). Two plain copies (_DESTINATIONS) go in one
    launch (copy with ``pair``): 7.0 us against 8.9 for two launches at 1023x1025x1027 timed alone, 27.9
    against 31.0 at 4095x4097x1531; inside a staged call's graph the two launches had overlapped already
    (the call moved 0.1 us at 1023x1025x1027; session 11, run 4). Eagerly it saves a launch's host time."""
    stage_a, stage_b = stagers
    if stage_a in _DESTINATIONS and stage_b in _DESTINATIONS:
        ya, yb = _DESTINATIONS[stage_a](a), _DESTINATIONS[stage_b](b)
        copy(a, ya, traced, pair=(b, yb))
        return ya, yb
    return (stage_a(a, traced) if stage_a else a), (stage_b(b, traced) if stage_b else b)


def _padded_k(K: int, like: torch.Tensor) -> int:
    """K rounded up to a multiple of 16 bytes of like's elements."""
    per = 16 // like.element_size()
    return cdiv(K, per) * per


def _padded_a_like(a: torch.Tensor) -> torch.Tensor:
    """A new K-major buffer for A (M, K): (M, Kp) rows 16-byte aligned, K padded to 16 bytes (_padded_k)."""
    return _aligned_empty(a.shape[0], _padded_k(a.shape[1], a), a)


def _padded_b_like(b: torch.Tensor) -> torch.Tensor:
    """A new K-major buffer for B (K, N): a (Kp, N) view of (N, Kp) rows, as _padded_a_like's."""
    return _aligned_empty(b.shape[1], _padded_k(b.shape[0], b), b).T


def _padded_a_copy(a: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """A copied into _padded_a_like, zeros past K."""
    return copy(a, _padded_a_like(a), traced)


def _padded_b_copy(b: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """B copied into _padded_b_like, zeros past K."""
    return copy(b, _padded_b_like(b), traced)


# The plain copies' destinations, by stager: _stage makes any two of them in one launch.
_DESTINATIONS = {_aligned_copy: _aligned_like, _padded_a_copy: _padded_a_like, _padded_b_copy: _padded_b_like}


def _vec(t: torch.Tensor) -> int:
    """The most elements, a power of two up to 16 bytes, that divide every stride of t but unit ones of its
    last two dims (a stride of 0 is a multiple of any). A unit stride there is a run that starts at a multiple
    of the kernel's block; a batch stride of 1 counts (z * 1 is no multiple). Dims of size 1 count too: their
    masked lanes still form addresses (an asynchronous copy of 0 bytes from a misaligned one), so only true
    claims are made about them."""
    vec = 16 // t.element_size()
    batch_dims = t.dim() - 2
    for i, stride in enumerate(t.stride()):
        if stride != 1 or i < batch_dims:
            vec = math.gcd(vec, stride)
    return vec


def _vec_hint(t: torch.Tensor) -> int:
    """gemm_kernel's VEC_* for t: 0 (no hint) where Triton's specialization says as much, else _vec."""
    return 0 if _specialized(t) else _vec(t)


def _specialized(t: torch.Tensor) -> bool:
    """Whether Triton's own specialization tells gemm_kernel all VEC would: a 16-byte aligned base and
    strides (of dims above size 1) that are 1 or divisible by 16."""
    return t.data_ptr() % 16 == 0 and all(s == 1 or s % 16 == 0 or n == 1 for n, s in zip(t.shape, t.stride()))


def alignment(a3, b3, c3, M: int, N: int, K: int, traced: bool = False) -> dict:
    """gemm_kernel's alignment hints for 3-D views of its operands: VEC_* for each tensor (0: none),
    DIV_* the powers of two below 16 that divide the sizes (1: none). Only what Triton's specialization
    does not say already (gemm_kernel's docstring). Traced products claim nothing: their sizes and
    strides may be symbolic, and the compiled graph keeps the hints for every size it is called with."""
    if traced:
        return dict(VEC_A=0, VEC_B=0, VEC_C=0, DIV_M=1, DIV_N=1, DIV_K=1)
    vec = [_vec_hint(t) for t in (a3, b3, c3)]
    div = [1 if n % 16 == 0 else math.gcd(n, 16) for n in (M, N, K)]
    return dict(VEC_A=vec[0], VEC_B=vec[1], VEC_C=vec[2], DIV_M=div[0], DIV_N=div[1], DIV_K=div[2])


def _load_bytes(t: torch.Tensor, vec: int) -> int:
    """Bytes the pointer kernel reads of t at a time: VEC elements (0: 16 bytes) where the base is 16-byte
    aligned and its contiguous dim's size is a multiple of them too (the masks along it), else one element."""
    size = t.element_size()
    vec = vec or 16 // size
    if t.data_ptr() % 16:
        return size
    for dim in (-1, -2):
        if t.stride(dim) == 1 and t.shape[dim] > 1:
            return math.gcd(vec, t.shape[dim]) * size
    return size


def _layout(t: torch.Tensor) -> str:
    """N: rows contiguous; T: a transposed view; S: strided both ways (of the last two dims)."""
    return "N" if t.stride(-1) == 1 else "T" if t.stride(-2) == 1 else "S"


def scale_kind(scale, vector: str) -> str:
    """How an FP8 operand's scale applies (kernels.tiles.SCALE_KINDS): one value, or a vector
    ("row" for A's (M, 1), "column" for B's (1, N)); "none" without one."""
    return "none" if scale is None else "tensor" if scale.numel() == 1 else vector


def bias_kind(bias, M, N) -> str:
    """How a bias broadcasts over (M, N): kernels.tiles.BIAS_KINDS."""
    if bias is None:
        return "none"
    stride_m, stride_n = bias.expand(M, N).stride()
    return "row" if stride_m == 0 else "column" if stride_n == 0 else "matrix"


def _hint(n) -> int:
    """A size as an int: itself, or under dynamic-shape tracing the example value behind it.
    Choices made from hints (a config) are valid for every size; they only tune speed."""
    return n if isinstance(n, int) else int(n.node.hint if n.node.hint is not None else 4096)


class _NoLaunch:
    """A kernel that is not launched: on fake tensors in the CPU interpreter, where no tracer
    can see a kernel and a fake implementation needs only the output's shape."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: None


def launcher(kernel, traced: bool):
    """How to launch ``kernel``: directly on real tensors; through wrap_triton on fake ones, so
    torch.compile records it (triton_op's tracing sees only wrapped kernels)."""
    if not traced:
        return kernel
    return _NoLaunch() if validation.interpreting() else torch.library.wrap_triton(kernel)


# fast_launch.Compiled of copy_kernel by the facts its specialization depends on: a staged
# product repeats its copies every call, and kernel[grid]'s binding (~20 us) would triple their
# host cost (session 4, run 6: 1023x1025x1027 eager 203 us a call against 28 us in a graph).
_copy_launches: dict = {}


def launch_step(step, traced: bool = False):
    """Launches one of Product.steps' (kernel, grid, args, constants, launch options), a TMA kernel's descriptors
    fitted to its tile first; returns Triton's compiled kernel (None in the interpreter or under tracing)."""
    kernel, grid, args, constants, options = step
    if kernel is gemm_tma_kernel:
        fit_descriptors(dict(zip(kernel.arg_names, args), **constants))
    return launcher(kernel, traced)[grid](*args, **constants, **options)


def copy(x: torch.Tensor, y: torch.Tensor, traced: bool = False, lo=None, pair=None) -> torch.Tensor:
    """y[:] = x for 2-D tensors of any strides, through copy_kernel; returns y. y may be larger than x
    along either dim: its elements outside x get 0 (a padded K). With ``lo`` (float32; a tensor of y's
    shape and strides), y gets x's TF32 high parts and lo the remainders instead. ``pair`` (x2, y2):
    y2[:] = x2 too, in the same launch. Transposing: 2.7-2.9 TB/s on an H100 against 0.95 TB/s for
    torch's x.T.contiguous() (notes/NOTES.md); into padded rows, torch's copy_ moved 1.5 TB/s
    (session 4, run 2)."""
    assert lo is None or lo.stride() == y.stride(), "the kernel writes lo with y's strides"
    assert lo is None or pair is None, "a pair is two plain copies"
    x2, y2 = pair if pair is not None else (x, y)  # unread without a pair
    key = None
    if not traced and fast_launch.enabled():  # a copy seen before: launched before anything else is worked out
        key = (x.device, x.dtype, x.shape, y.shape, x.stride(), y.stride(), x.data_ptr() & 15, y.data_ptr() & 15,
               None if lo is None else lo.data_ptr() & 15,
               pair and (x2.dtype, x2.shape, y2.shape, x2.stride(), y2.stride(), x2.data_ptr() & 15,
                         y2.data_ptr() & 15))
        known = _copy_launches.get(key)
        if known is not None:
            with device.on_device(x.device):
                if known((x, y, lo, x2, y2), fast_launch.current_stream(device.index(x.device))):
                    return y
    assert all(ny >= nx for ny, nx in zip((*y.shape, *y2.shape), (*x.shape, *x2.shape))), "y holds x"
    (RY, CY), (RY2, CY2) = y.shape, y2.shape
    facts = device.facts(x.device)

    def programs(block):
        return cdiv(RY, block) * cdiv(CY, block) + (cdiv(RY2, block) * cdiv(CY2, block) if pair else 0)
    block = COPY_BLOCK
    if programs(block) < COPY_MIN_PROGRAMS_PER_SM * facts.num_sms:
        block = COPY_SMALL_BLOCK
    grid = (programs(block),)
    if not grid[0]:
        return y
    args = (x, y, lo, x2, y2, *x.shape, RY, CY, *x.stride(), *y.stride(), *x2.shape, RY2, CY2, *x2.stride(),
            *y2.stride())
    split, paired = lo is not None, pair is not None
    pad = y.shape != x.shape or y2.shape != x2.shape
    pdl = _pdl(facts, traced)
    with device.on_device(x.device):
        compiled = launcher(copy_kernel, traced)[grid](*args, BLOCK=block, SPLIT_TF32=split, PAIR=paired, PAD=pad,
                                                       PDL=pdl, **_options(pdl, 4))
    if key is not None and compiled is not None and not torch.cuda.is_current_stream_capturing():
        _remember(_copy_launches, key,
                  fast_launch.Compiled(compiled, grid, (*args[5:], block, split, paired, pad, pdl)))
    return y


def transpose(x: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """x.T as a new row-major tensor with 16-byte aligned rows."""
    return copy(x.T, _aligned_empty(x.shape[1], x.shape[0], x), traced)


def _row_major_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    return transpose(t.T, traced)


def _column_major_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    return transpose(t, traced).T


def _split_a(a: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """A (M, K), any strides, for the PRESPLIT TMA kernel: a K-major (2M, K) buffer holding its
    TF32 high parts in rows [0, M) and the remainders in rows [M, 2M) (kernels/copy.py, SPLIT_TF32)."""
    rows = a.shape[0]
    buf = _aligned_empty(2 * rows, a.shape[1], a)
    copy(a, buf[:rows], traced, lo=buf[rows:])
    return buf


def _split_b(b: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """B (K, N) for the PRESPLIT TMA kernel: a (K, 2N) view of a K-major (2N, K) buffer, B.T split."""
    return _split_a(b.T, traced).T


def _k_major_stagers(a: torch.Tensor, b: torch.Tensor) -> list:
    """The copies that make TF32, tf32x3 and FP8 operands K-major (None: already so). wgmma
    reads 32-bit and 8-bit operands from shared memory only K-major; Triton otherwise stages a
    row-major B through registers every K step. Measured on an H100 at 4096^3 TF32
    (notes/NOTES.md): 99 TFLOP/s as it is, 364 on a K-major copy, which costs one read and one
    write of the operand (0.05 ms)."""
    return [_row_major_copy if a.stride(1) != 1 else None, _column_major_copy if b.stride(0) != 1 else None]


class Product:
    """One product: act(A @ B + bias) into C, for 2-D operands or a batch of 3-D ones. Holds its
    kernel path, arguments and grid, ready to run under any config: the TMA kernel (operands
    staged into aligned buffers where needed), or the pointer kernel, split over K where the
    config says so."""

    def __init__(self, a, b, c, precision: str, bias=None, activation: str = "none", scales=(None, None),
                 captured=None):
        self.traced = validation.traced(a)
        # The caller's operands: what the one-row kernel reads. The others read self.a, self.b (staged
        # copies where the path needs them); every kernel writes self.out.
        self.given = (a, b)
        # Launched into a CUDA graph (None: whether the stream is capturing now); moves the path rule.
        self.captured = (not self.traced and capturing(a)) if captured is None else captured
        self.batched = a.dim() == 3
        self.Z = a.shape[0] if self.batched else 1
        self.M, self.K = a.shape[-2:]
        self.N = b.shape[-1]
        self.dtype, self.precision, self.device = a.dtype, precision, a.device
        self.facts = device.facts(a.device)
        self.layout = _layout(a) + _layout(b) + ("b" if self.batched else "")
        self.scales = scales  # FP8 products' (scale_a, scale_b), or (None, None)
        self.constants = dict(
            BIAS=bias_kind(bias, self.M, self.N), ACTIVATION=activation,
            SCALE_A=scale_kind(scales[0], "row"), SCALE_B=scale_kind(scales[1], "column"),
            # tl.dot's input_precision; 16-bit products ignore it.
            INPUT_PRECISION=precision if precision in ("ieee", "tf32x3") else "tf32",
            UPCAST=a.dtype in (torch.bfloat16, *validation.FP8_DTYPES) and validation.interpreting(),
            PDL=_pdl(self.facts, self.traced),
        )
        self.bias, self.out = bias, c
        # The bias as a broadcast (M, N) view: a linear layer's (N,) bias has strides (0, 1).
        self.bias_strides = bias.expand(self.M, self.N).stride() if bias is not None else (0, 0)
        # Copies made before the kernel: a function per operand (None: read as it is). A relaunch of
        # this product repeats them (_relaunch).
        self.stagers = [None, None]
        # tf32x3 on the TMA kernel splits the operands into TF32 parts once, before it runs
        # (kernels/gemm_tma.py, PRESPLIT), instead of every tile as it is loaded, where the
        # product is large enough to pay for the split copies (TF32X3_SPLIT_MIN_MACS_PER_BYTE).
        self.presplit = precision == "tf32x3" and self._tma_candidate() and \
            tma_path(self.facts, self.M, self.N, self.K, 0, self.captured) and \
            self.M * self.N * self.K >= TF32X3_SPLIT_MIN_MACS_PER_BYTE * 12 * (self.M + self.N) * self.K
        if self.presplit:
            self.stagers = [_split_a, _split_b]
            self.constants["INPUT_PRECISION"] = "tf32"  # each of the three products
        elif self.facts.tma and (precision in ("tf32", "tf32x3") or a.dtype in validation.FP8_DTYPES) \
                and not self.batched:
            self.stagers = _k_major_stagers(a, b)
        a, b = _stage(self.stagers, a, b, self.traced)
        self.a, self.b = a, b
        self.path, self.kernel = "pointer", gemm_kernel
        # Whether this plan is one only a CUDA graph runs: captured, and on the TMA kernel or staged
        # operands where an eager call of the same product would not be (graph_only).
        self.graph_only = False
        if self._tma_candidate():
            self._try_tma()
        if self.path == "pointer":
            if not any(self.stagers):
                self.stagers = self._pointer_stagers(self.captured)
                self.graph_only = self.captured and any(self.stagers) and not any(self._pointer_stagers(False))
                a, b = _stage(self.stagers, a, b, self.traced)
                self.a, self.b = a, b
                self.layout = _layout(a) + _layout(b)  # the staged operands' (never a batch)
            self.constants["SPLIT_K"] = 1  # one slice; steps() launches split-K configs in two passes
            self.args = self._pointer_args(a, b, c)
            self.constants.update(alignment(*self.args[:3], _hint(self.M), _hint(self.N), _hint(a.shape[-1]),
                                            self.traced))

    def _pointer_stagers(self, captured: bool) -> list:
        """The copies that let the pointer kernel read the caller's operands 16 bytes at a time
        (POINTER_STAGE_MAX_LOAD_BYTES): K-major, K zero-padded to 16 bytes (then both operands, so their
        K agree); [None, None] where the rule does not stage. Unbatched products of real 16-bit tensors with
        more than one row (one row is the one-row kernel's, which reads the caller's operands); not float32
        or FP8 (not measured; on Hopper TF32 and FP8 operands are staged K-major already)."""
        a, b = self.given
        if self.batched or self.traced or self.M < TMA_MIN_ROWS or a.element_size() != 2 or \
                not (captured or self.M * self.N * self.K >= STAGE_EAGER_MIN_MACS):
            return [None, None]
        widths = self._read_widths()
        if min(widths) > POINTER_STAGE_MAX_LOAD_BYTES:
            return [None, None]
        pad = _padded_k(self.K, a) != self.K
        stagers = [_padded_a_copy if pad or widths[0] < 16 else None, _padded_b_copy if pad or widths[1] < 16 else None]
        if min(widths) >= ASYNC_COPY_MIN_BYTES:  # asynchronous reads: staged only where the copies pay
            moved = sum(_copy_bytes(t) for t, s in zip((a, b), stagers) if s)
            if moved > POINTER_STAGE_SMALL_BYTES and self.M * self.N * self.K < POINTER_STAGE_MIN_MACS_PER_BYTE * moved:
                return [None, None]
        return stagers

    def _pointer_args(self, a, b, c) -> tuple:
        """The pointer kernel's arguments (and the one-row kernel's: the same list), over 3-D views. An
        unbatched product's batch strides are 0: unsqueeze(0) gives a transposed view a stride of its
        row count, and one not divisible by 16 would hide the alignment of every load from Triton."""
        if self.batched:
            a3, b3, c3 = a, b, c
        else:
            a3, b3, c3 = (t.as_strided((1, *t.shape), (0, *t.stride())) for t in (a, b, c))
        return (a3, b3, c3, self.bias, *self.scales, self.M, self.N, a.shape[-1],  # K, padded where staged
                *a3.stride(), *b3.stride(), *c3.stride(), *self.bias_strides)

    def _staged_bytes(self) -> int:
        """What the copies that let TMA read this product's operands would move (C needs none: C_DESC)."""
        return sum(_copy_bytes(t) for t in (self.a, self.b) if _tma_source(t) is None)

    def _read_widths(self) -> list:
        """Bytes the pointer kernel would read of each of the caller's operands at a time (_load_bytes)."""
        return [_load_bytes(t, _vec_hint(t)) for t in self.given]

    def _read_bytes(self) -> int:
        """The narrowest read the pointer kernel would make of the caller's operands (tma_path's read_bytes); one
        element for other than 16-bit operands, where wide reads were not measured against staging."""
        return min(self._read_widths()) if self.dtype.itemsize == 2 else self.dtype.itemsize

    @property
    def differs_when_captured(self) -> bool:
        """Whether this eager product on the pointer kernel would run otherwise in a CUDA graph: on the TMA
        kernel, or on staged operands (_pointer_stagers)."""
        if self.captured or self.path != "pointer":
            return False
        return (self._tma_candidate() and tma_path(self.facts, self.M, self.N, self.K, self._staged_bytes(),
                                                   captured=True, read_bytes=self._read_bytes())) or \
            (not any(self.stagers) and any(self._pointer_stagers(captured=True)))

    def _tma_candidate(self) -> bool:
        """TMA serves unbatched products of real tensors on Hopper (the size rule: tma_path)."""
        return self.facts.tma and not self.batched and not self.traced

    def _try_tma(self):
        """The TMA path if tma_path says so, staging what TMA cannot read: an operand into an
        aligned copy (the caller's tensors are only read); a C that TMA cannot write is stored through
        pointers. Staged buffers live for the call: memory of up to A and B again (tf32x3's split
        operands: twice A and B), each row padded to ROW_PAD elements."""
        a, b, c = self.a, self.b, self.out
        sources = [_tma_source(t) for t in (a, b)]
        staged_bytes, read_bytes = self._staged_bytes(), self._read_bytes()
        if not tma_path(self.facts, self.M, self.N, self.K, staged_bytes, self.captured, read_bytes):
            return
        self.graph_only = self.captured and not tma_path(self.facts, self.M, self.N, self.K, staged_bytes, False,
                                                         read_bytes)
        # Operands already staged K-major sit in aligned buffers: only the caller's own are copied here.
        copies = [_aligned_copy if source is None else None for source in sources]
        a, b = _stage(copies, a, b)
        self.stagers = [new or old for new, old in zip(copies, self.stagers)]
        self.a, self.b = a, b
        (_, a_t), (_, b_t) = _tma_source(a), _tma_source(b)
        self.path, self.kernel = "tma", gemm_tma_kernel
        self.constants.update(A_TRANS=a_t, B_TRANS=b_t, NUM_SMS=self.facts.num_sms, PRESPLIT=self.presplit,
                              C_DESC=_c_descriptor(c), SPLIT_K=1, SHIFT=TMA_SHIFT)
        self.args = self._tma_args(a, b, c, self.bias, *self.scales)

    def _tma_args(self, a, b, c, bias, scale_a, scale_b) -> tuple:
        """The TMA kernel's arguments for C = A @ B (C's rows: M). Placeholder descriptor blocks;
        fit_descriptors sets each config's tile before launch."""
        descs = [TensorDescriptor.from_tensor(_tma_source(t)[0], [16, 16]) for t in (a, b)]
        c_arg = TensorDescriptor.from_tensor(c, [16, 16]) if self.constants["C_DESC"] else c
        return (*descs, c_arg, bias, scale_a, scale_b, c.shape[0], self.N, self.K, *self.bias_strides, *c.stride())

    @property
    def staged(self) -> bool:
        """Whether operands are copied for this product (its memory cost: those copies), under
        every config but the one-row kernel's, which reads the caller's tensors."""
        return any(self.stagers)

    @property
    def can_split(self) -> bool:
        """Split-K runs on the pointer kernel and on the TMA kernel (not on operands split into TF32 parts),
        for unbatched products, outside tracing (a compiled graph keeps one launch per product)."""
        return not self.batched and not self.traced and not self.presplit

    def split(self, cfg: triton.Config) -> int:
        """Slices of K this config runs with here: 1 for a SPLIT_K pinned where it cannot apply,
        and where the workspace would pass 2**31 elements (split_k.py offsets it in int32)."""
        split = config_space.split_k(cfg) if self.can_split and not config_space.is_gemv(cfg) else 1
        return split if split * _hint(self.M) * _hint(self.N) < 2 ** 31 else 1

    def launches(self, cfg: triton.Config) -> int:
        """Kernel launches of one call under cfg (its staging copies aside): split-K's two passes, a
        wave-tail split's two launches, or one."""
        return 2 if self.split(cfg) > 1 or self.tail_rows(cfg) else 1

    def grid(self, meta, split: int = 1, rows=None):
        """The launch grid under meta's tile, over all of C's rows or the first ``rows``."""
        tiles = cdiv(self.M if rows is None else rows, meta["BLOCK_M"]) * cdiv(self.N, meta["BLOCK_N"])
        return (min(tiles * split, self.facts.num_sms),) if self.path == "tma" else (self.Z * tiles * split,)

    def tail_rows(self, cfg: triton.Config) -> int:
        """Where cfg asks for a wave-tail split (config_space.tail_rows) and this product can take
        one (the TMA path, operands not split into TF32 parts): the rows the first launch covers; else 0."""
        if not config_space.tail(cfg) or self.path != "tma" or self.presplit:
            return 0
        return config_space.tail_rows(self.M, self.N, cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], self.facts.num_sms)

    def row_ranges(self, cfg: triton.Config):
        """((0, R), (R, M)): the rows of each launch of a wave-tail split; None without one."""
        rows = self.tail_rows(cfg)
        return ((0, rows), (rows, self.M)) if rows else None

    def _tma_rows(self, r0: int, r1: int, cfg: triton.Config):
        """The TMA kernel's launch over rows [r0, r1) of the product under cfg, with descriptors of its own."""
        tile = config_space.kernel_params(cfg)
        return (gemm_tma_kernel, self.grid(tile, rows=r1 - r0),
                self._tma_args(*row_views(r0, r1, self.a, self.b, self.out, self.bias, *self.scales)),
                dict(self.constants, **tile), _options(self.constants["PDL"], cfg.num_warps, cfg.num_stages))

    def _epilogue(self) -> dict:
        """The epilogue's constants (scales, bias, activation), for kernels that take no others."""
        return {k: self.constants[k] for k in ("BIAS", "ACTIVATION", "SCALE_A", "SCALE_B")}

    def steps(self, cfg: triton.Config) -> list:
        """The launches of this product under cfg: (kernel, grid, args, constants, launch options), in order."""
        options = _options(self.constants["PDL"], cfg.num_warps, cfg.num_stages)
        if config_space.is_gemv(cfg):  # the caller's operands and out, as they are (self.staged: not for it)
            tile = dict(BLOCK_N=cfg.kwargs["BLOCK_N"], BLOCK_K=cfg.kwargs["BLOCK_K"])
            grid = (self.Z * self.M * cdiv(self.N, tile["BLOCK_N"]),)
            return [(gemv_kernel, grid, self._pointer_args(*self.given, self.out),
                     dict(self._epilogue(), **tile, PDL=self.constants["PDL"]), options)]
        ranges = self.row_ranges(cfg)
        if ranges:  # the whole waves on cfg's tiles, then the last rows on small ones over every SM
            (r0, r1), (r2, r3) = ranges
            return [self._tma_rows(r0, r1, cfg), self._tma_rows(r2, r3, config_space.tail_config(r3 - r2, self.N))]
        split = self.split(cfg)
        tile = config_space.kernel_params(cfg)
        if split == 1:
            return [(self.kernel, self.grid(tile), self.args, dict(self.constants, **tile), options)]
        # Split-K: fp32 partial sums of each slice of K into a workspace, then the ordered sum
        # with the epilogue. The workspace is (split, M, N) fp32: split-K serves products of few
        # tiles only (on the pointer kernel M*N at most num_sms/2 tiles of 64x64 under the tuner's
        # rule; on the TMA kernel a workspace of at most a tenth of the operands' bytes).
        a3, b3 = self.args[0], self.args[1]
        ws = torch.empty((split, self.M, self.N), dtype=torch.float32, device=self.device)
        plain = {k: "none" for k in self._epilogue()}
        if self.path == "tma":  # the slices' units, then the sum; the workspace is stored through pointers
            first = (gemm_tma_kernel, self.grid(tile, split),
                     (a3, b3, ws, None, None, None, self.M, self.N, self.K, 0, 0, self.N, 1),
                     dict(self.constants, **tile, **plain, SPLIT_K=split, C_DESC=False), options)
        else:
            first = (gemm_kernel, self.grid(tile, split),
                     (a3, b3, ws, None, None, None, self.M, self.N, a3.shape[-1], *a3.stride(), *b3.stride(),
                      *ws.stride(), 0, 0),
                     dict(self.constants, **tile, **plain, SPLIT_K=split, VEC_C=_vec_hint(ws)), options)
        second = (split_k_reduce_kernel, (cdiv(self.M, 32), cdiv(self.N, 128)),
                  (ws, self.out, self.bias, *self.scales, self.M, self.N, *self.out.stride(), *self.bias_strides),
                  dict(SPLIT_K=split, BLOCK_M=32, BLOCK_N=128, PDL=self.constants["PDL"], **self._epilogue()),
                  _options(self.constants["PDL"], 4))
        return [first, second]

    def run(self, cfg: triton.Config) -> list:
        """Launches under ``cfg``; returns the launches as
        (Triton's compiled kernel, or None in the interpreter; the step it ran), for compiled()."""
        return [(launch_step(step, self.traced), step) for step in self.steps(cfg)]

    def compiled(self, launched):
        """What fast_launch needs to relaunch the launches run() made (its staging copies are
        repeated by _relaunch), or None where a call must re-plan: tracing or graph capture."""
        if any(compiled is None for compiled, _ in launched) or not self.can_benchmark:
            return None
        launches = []
        for compiled, (kernel, grid, args, constants, _) in launched:
            named = {**dict(zip(kernel.arg_names, args)), **constants}
            # (ws, C, bias, scale_a, scale_b) or (A, B, C, bias, scale_a, scale_b)
            tensors = 5 if kernel is split_k_reduce_kernel else 6
            descriptors = args[:2 + constants["C_DESC"]] if kernel is gemm_tma_kernel else None
            launches.append(fast_launch.Compiled(compiled, grid, tuple(named[n] for n in kernel.arg_names[tensors:]),
                                                 descriptors))
        return launches

    @property
    def can_benchmark(self) -> bool:
        """Tuning times kernels: never on fake tensors or inside CUDA-graph capture."""
        return not self.traced and not (self.device.type == "cuda" and torch.cuda.is_current_stream_capturing())

    @property
    def operand_bytes(self) -> int:
        """Bytes of one operand element in shared memory: float32's two TF32 parts when split."""
        return self.dtype.itemsize * (2 if self.presplit else 1)

    def space(self) -> list:
        """The config space of this product's family (config_space.family)."""
        return config_space.configs(self.dtype, self.precision, self.presplit)

    def prune(self, cfgs):
        return config_space.prune(cfgs, _hint(self.M), _hint(self.N), _hint(self.K), self.operand_bytes,
                                  self.facts.smem_bytes, self.path == "tma", self.constants["BIAS"] == "matrix",
                                  self.out.element_size())

    @property
    def _b_k_contiguous(self) -> bool:
        """Whether the caller's B (which the one-row kernel reads, not a staged copy) runs along K
        (x @ W.T: a weight's rows), the one-row kernel's best case."""
        return self.given[1].stride(-2) == 1

    def candidates(self) -> list:
        """The configs tuning times: the family's space (its TMA-only tiles on that kernel only, the tall one
        where N leaves a wide tile's last column mostly empty; its narrow tiles for products of few tiles),
        pruned, with wave-tail (TMA, 16-bit) and split-K variants where they apply, on the TMA kernel its short
        tiles for products of few rows, and for one-row products the one-row kernel's configs."""
        family = config_space.family(self.dtype, self.precision, self.presplit)
        kept, _ = self.prune([c for c in self.space() if self._tall_offered or not config_space.tuned_tma_only(c)])
        # Pruned apart: a narrow tile must not make prune() drop the space's wider ones as too large.
        kept += self.prune(config_space.narrow(family, _hint(self.M), _hint(self.N), self.facts.num_sms))[0]
        if self.path == "tma":
            if family == "16bit":  # split TF32 operands are float32: never this family
                kept = config_space.with_tail(kept, self.M, self.N, self.facts.num_sms)
            if self.can_split:
                kept = config_space.with_tma_split(kept, self.M, self.N, self.K, self.operand_bytes, self.facts.num_sms)
            # After the split variants: short tiles stream the weight whole (session 22, run 9: split, they lost).
            return kept + self.prune(config_space.short(family, _hint(self.M)))[0]
        if self.can_split:
            kept = config_space.with_split_k(kept, _hint(self.M), _hint(self.N), _hint(self.K), self.facts.num_sms)
        if _hint(self.M) == 1 and self._b_k_contiguous:
            kept += self.prune(config_space.gemv_space())[0]
        return kept

    def heuristic(self) -> triton.Config:
        one_row = config_space.one_row(_hint(self.M), _hint(self.N), _hint(self.Z), self.facts.num_sms,
                                       self._b_k_contiguous)
        if one_row is not None:
            return one_row
        return config_space.heuristic(_hint(self.M), _hint(self.N), _hint(self.K), self.dtype, self.precision,
                                      max(1, self.facts.num_sms // _hint(self.Z)),
                                      self.operand_bytes, self.facts.smem_bytes, self.path == "tma",
                                      self.constants["BIAS"] == "matrix", self.can_split and self.path == "pointer",
                                      self.out.element_size(),
                                      self.presplit)

    @property
    def tuning_key(self) -> tuple:
        """What the best config depends on; shapes as buckets, so nearby shapes share a config."""
        return (self.facts.name, self.dtype, self._key_precision, self.path, self._key_layout, self.epilogue,
                *config_space.tuning_shape(_hint(self.M), _hint(self.N), _hint(self.K)))

    def cache_key(self) -> str:
        """tuning_key as the disk cache spells it."""
        from .cache import make_key
        return make_key(self.facts.name, self.dtype, self._key_precision, self.path, self._key_layout + self.epilogue,
                        _hint(self.M), _hint(self.N), _hint(self.K))

    @property
    def _key_layout(self) -> str:
        """The operands' layout as keys spell it: with the pointer kernel's read widths (loads), '+c' where the
        TMA kernel stores C through pointers (C_DESC), '+t' where the tuner times the tall tile, and '~graph'
        for a plan only CUDA graphs run (graph_only): tuned for graph replay alone (tuning.rank), it keys apart
        from eager products of the same path and layout, which pay each launch's host time."""
        return self.layout + self.loads + ("" if self.constants.get("C_DESC", True) else "+c") + \
            ("+t" if self._tall_offered else "") + ("~graph" if self.graph_only else "")

    @property
    def _tall_offered(self) -> bool:
        """Whether candidates() holds the tall tile (config_space.tall_tile_serves: decided by the exact N,
        which the key's N bucket does not tell apart)."""
        return self.path == "tma" and config_space.tall_tile_serves(_hint(self.N))

    @property
    def loads(self) -> str:
        """'' where A and B allow the pointer kernel 16-byte reads (and on the TMA path), else
        '@{bytes of A}.{bytes of B}', the widest reads their alignment allows (what the compiler makes of
        the hints differs by Triton version: gemm_kernel's docstring): the best config differs with them."""
        if self.path != "pointer" or self.traced:
            return ""
        wa, wb = (_load_bytes(t, self.constants[v]) for t, v in zip(self.args[:2], ("VEC_A", "VEC_B")))
        return "" if wa == wb == 16 else f"@{wa}.{wb}"

    @property
    def _key_precision(self) -> str:
        """The precision as keys spell it: split tf32x3 products have a space of their own."""
        return config_space.family(self.dtype, self.precision, self.presplit) if self.presplit else self.precision

    @property
    def epilogue(self) -> str:
        """'' for a plain product, else '+bias kind+activation' (and FP8's scale kinds and output
        dtype): the epilogue's registers and shared memory move the best config, and can make one
        that fits without it too large."""
        bias, act = self.constants["BIAS"], self.constants["ACTIVATION"]
        plain = "" if bias == act == "none" else f"+{bias}+{act}"
        if self.dtype not in validation.FP8_DTYPES:
            return plain
        return f"{plain}+scale-{self.constants['SCALE_A']}-{self.constants['SCALE_B']}+{str(self.out.dtype)[6:]}"


def product(a, b, *, precision: str, bias=None, activation: str = "none", out=None, config=None,
            scales=(None, None), out_dtype=None):
    """act(a @ b + bias) into out (allocated when None, of out_dtype or a's dtype) and returned.
    a is (M, K) and b (K, N), or both 3-D, (Z, M, K) and (Z, K, N), for Z products in one launch
    (a batch stride of 0 broadcasts an operand). FP8 operands come with ``scales`` (scale_a,
    scale_b) applied to the fp32 accumulator. Arguments are assumed checked (validation.py)."""
    if out is None and validation.traced(a) and scales == (None, None) and _runs_opaque(a, b):
        # torch.compile is tracing a product that runs on the TMA kernel, or may split K. The TMA
        # kernel's host-side tensor descriptors do not trace through triton_op in torch 2.11-2.14
        # (the compiled graph lost the launch), and the pointer kernel runs such products at 0.4x
        # (notes/NOTES.md, run 15); a traced product keeps one launch, so split-K's decode products
        # ran unsplit (session 8, run 6, the compile suite's block at M = 16: the same device time,
        # and 151 us a call of host time against 205 traced). The graph calls the planner itself
        # when it runs, through an operator it cannot see into.
        return torch.ops.tritonmm.eager_product(a, b, bias, activation, precision,
                                                None if config is None else config_space.as_list(config))
    key = None
    if config is None and not validation.traced(a):
        key = launch_key(a, b, out, bias, activation, precision, scales, out_dtype)
        done = _relaunch(_compiled.get(key) if fast_launch.enabled() else None, a, b, out, bias, scales, out_dtype)
        if done is not None:
            return done
    if out is None:
        out = _new_out(a, b, out_dtype)
    if out.numel() == 0:
        return out
    if a.shape[-1] == 0:  # an empty sum: the epilogue alone
        return out.copy_(epilogue_reference(torch.zeros_like(out, dtype=torch.float32), bias, activation))
    with device.on_device(a.device):
        launch = Product(a, b, out, precision, bias, activation, scales)
        if config is None and launch.differs_when_captured and launch.can_benchmark and \
                validation.autotune_enabled(default=not validation.interpreting()):
            # Captured, this product will run otherwise (the TMA kernel, or staged operands), where nothing
            # can be tuned: tuned now.
            tuning.choose_config(Product(a, b, out, precision, bias, activation, scales, captured=True))
        cfg = config or tuning.choose_config(launch)
        launched = launch.run(cfg)
        ready = launch.compiled(launched) if key is not None else None
    if ready is not None:
        rows = launch.row_ranges(cfg)
        # split-K's workspace shape, as steps() made it
        workspace = (launch.split(cfg), launch.M, launch.N) if len(ready) > 1 and not rows else None
        staged = launch.staged and not config_space.is_gemv(cfg)
        stage = tuple(launch.stagers) if staged else None
        index = device.index(a.device) if a.device.type == "cuda" else None
        _remember(_compiled, key, _Relaunch(tuple(ready), workspace, tuple(_span(t) for t in (a, b, out)),
                                            (out.shape, out.stride()), stage, rows, index))
    return out


def _new_out(a, b, out_dtype=None) -> torch.Tensor:
    """An uninitialized result for a @ b: a's leading dims and b's last, of out_dtype or a's dtype.
    (new_empty: torch.empty's parsing of dtype and device costs 0.7 us more on the CPU machine.)"""
    shape = (*a.shape[:-1], b.shape[-1])
    return a.new_empty(shape) if out_dtype is None else a.new_empty(shape, dtype=out_dtype)


def _remember(cache: dict, key, entry) -> None:
    """cache[key] = entry; a cache of many distinct shapes starts over rather than grow without bound."""
    if len(cache) >= 4096:
        cache.clear()
    cache[key] = entry


def _runs_opaque(a, b) -> bool:
    """Whether a traced product goes into the graph as the opaque eager_product, to be planned when
    the graph runs: where product(a, b) on real tensors like these would take the TMA path
    (tma_path), or could split K over few tiles (split_for; split-K's second launch and workspace
    are the planner's). Read from strides and storage offsets, which fake tensors have; sizes as
    their example values under dynamic shapes (the choice only moves speed). C, a new (M, N)
    tensor, is never staged (the TMA kernel stores rows it cannot write through pointers)."""
    def staged_bytes(t):
        size = t.element_size()
        row = t.stride(0) if t.stride(1) == 1 else t.stride(1) if t.stride(0) == 1 else 1
        aligned = _hint(row) * size % 16 == 0 and _hint(t.storage_offset()) * size % 16 == 0
        return 0 if aligned else 2 * _hint(t.shape[0]) * _hint(t.shape[1]) * size
    if a.dim() != 2:
        return False
    M, K, N = _hint(a.shape[0]), _hint(a.shape[1]), _hint(b.shape[1])
    facts = device.facts(a.device)
    if _few_tiles(facts, M, N):
        return config_space.split_for(cdiv(M, 64) * cdiv(N, 64), cdiv(K, 64), facts.num_sms) > 1
    return tma_path(facts, M, N, K, staged_bytes(a) + staged_bytes(b))


class _Relaunch(NamedTuple):
    """A product seen before, ready to launch again (fast_launch.Compiled per launch)."""
    launches: tuple
    workspace: tuple | None  # split-K's fp32 (SPLIT_K, M, N), allocated per call
    spans: tuple  # bytes a, b and out span from their data_ptr: the overlap check of out=
    out_layout: tuple  # (shape, strides) of a result it allocates: new_empty_strided, 0.8 us less than new_empty
    stage: tuple | None  # (stager of a, stager of b), as Product made them
    rows: tuple | None = None  # a wave-tail split's rows per launch (Product.row_ranges)
    index: int | None = None  # the operands' CUDA device (None: not a CUDA device)


# _Relaunch by launch_key: products seen before relaunch their compiled kernels.
_compiled: dict = {}

# The planner's settings: its numeric module constants (above), which choose a product's path, staging
# and kernel constants. Tests and experiments assign them (plan.TMA_MIN_MACS = 0), and a launch cached under one
# value must not be relaunched under another. In launch_key they cost 0.7 us a call on the CPU machine
# (session 24, timeit: 1.64 us a key with them, 0.93 without); instead, assigning one empties the cache
# (_Planner). With linear's key and new_empty_strided (below), linear's host time at 64^3 went from
# 1.29-1.42x F.linear's to 1.06-1.17x (session 24, run 4, notes/experiments/host_ab.py).
SETTINGS = frozenset(name for name, value in globals().items() if name.isupper() and type(value) in (int, float, bool))


class _Planner(types.ModuleType):
    """This module's type: assigning one of its SETTINGS (as monkeypatch.setattr does) forgets every
    cached launch."""

    def __setattr__(self, name, value):
        if name in SETTINGS:
            _compiled.clear()
            _copy_launches.clear()
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Planner


def _facts(t):
    return None if t is None else (type(t), t.device, t.dtype, t.shape, t.stride(), t.data_ptr() & 15)


# The type of a view of a tensor of each type (a Parameter's is a plain Tensor).
_VIEW_TYPES = {torch.Tensor: torch.Tensor, torch.nn.Parameter: torch.Tensor}


def launch_key(a, b, out, bias, activation, precision, scales=(None, None), out_dtype=None, b_transposed=False):
    """Every fact that the argument checks, the path, the config and Triton's specialization
    of a product depend on: a call whose key equals an earlier call's passes the same checks
    (but out='s overlap, which _relaunch checks) and launches the same compiled kernels. (The
    planner's SETTINGS are not in it: assigning one empties the cache instead.) ``b_transposed``:
    b is given as b.T (linear's weight), and the key is a @ b.T's, without building the view."""
    # Spelled out for the operands, and _facts only for tensors that are there: every eager call
    # builds this key, and each Python call in it costs a few tenths of a microsecond on the host.
    scale_a, scale_b = scales
    on = a.device
    if b_transposed:  # b.T's facts: w.T costs 0.8 us on the device's host
        type_b, shape_b, stride_b = _VIEW_TYPES.get(type(b)) or type(b.T), b.shape[::-1], b.stride()[::-1]
    else:
        type_b, shape_b, stride_b = type(b), b.shape, b.stride()
    return (type(a), on, a.dtype, a.shape, a.stride(), a.data_ptr() & 15,
            type_b, b.device, b.dtype, shape_b, stride_b, b.data_ptr() & 15,
            None if out is None else _facts(out), None if bias is None else _facts(bias),
            None if scale_a is None else _facts(scale_a), None if scale_b is None else _facts(scale_b),
            out_dtype, activation, precision, on.type == "cuda" and torch.cuda.is_current_stream_capturing(),
            tuning.generation)


def row_views(r0: int, r1: int, a, b, c, bias, scale_a, scale_b) -> tuple:
    """(a, b, c, bias, scale_a, scale_b) of rows [r0, r1) of the product c = a @ b: the rows of A and
    C, and of the bias and A's scales where they vary by row."""
    if bias is not None:
        bias = bias.expand(*c.shape)[r0:r1]
    if scale_a is not None and scale_a.numel() > 1:
        scale_a = scale_a[r0:r1]
    return a[r0:r1], b, c[r0:r1], bias, scale_a, scale_b


def _span(t) -> int:
    return 0 if t is None or t.numel() == 0 else \
        (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()


def _relaunch(known, a, b, out, bias, scales=(None, None), out_dtype=None):
    """The result of a product seen before, launched straight from its cache entry ``known`` (the
    _Relaunch under its launch_key), or None (none; out= overlapping an input, which the checks
    will refuse)."""
    if known is None:
        return None
    if out is None:
        shape, strides = known.out_layout
        out = a.new_empty_strided(shape, strides) if out_dtype is None else \
            a.new_empty_strided(shape, strides, dtype=out_dtype)
    else:
        o, span_a, span_b, span_o = out.data_ptr(), *known.spans
        for t, span in ((a, span_a), (b, span_b)):
            p = t.data_ptr()
            if p < o + span_o and o < p + span:
                return None
    index = known.index
    if index is None or index == torch.cuda.current_device():  # the common case: no device switch
        return _launch_entry(known, a, b, out, bias, scales, index)
    with torch.cuda.device(index):
        return _launch_entry(known, a, b, out, bias, scales, index)


def _launch_entry(known, a, b, out, bias, scales, index):
    """_relaunch's launches, on the current device (the operands'), into out; out, or None if refused."""
    stream = fast_launch.current_stream(index)
    if known.stage is not None:
        a, b = _stage(known.stage, a, b)
    if known.rows is not None:
        done = all(launch(row_views(r0, r1, a, b, out, bias, *scales), stream)
                   for launch, (r0, r1) in zip(known.launches, known.rows))
    elif known.workspace is None:
        done = known.launches[0]((a, b, out, bias, *scales), stream)
    else:
        ws = torch.empty(known.workspace, dtype=torch.float32, device=a.device)
        first, second = known.launches
        done = first((a, b, ws, None, None, None), stream) and second((ws, out, bias, *scales), stream)
    return out if done else None


def relaunch(a, b, out=None, bias=None, activation="none", input_precision=None, matrices=False,
             scales=(None, None), out_dtype=None, b_transposed=False):
    """For the public ops, before any check: the result of a product whose every checked fact
    equals an earlier call's (launch_key), or None to take the full path. ``matrices``: only
    2-D operands (torch.mm's rule; a batched product's key would otherwise match);
    ``b_transposed``: the product is a @ b.T (launch_key). Never raises on bad arguments: those
    miss the cache, and the full path's checks name them."""
    if validation.traced(a):
        return None
    try:
        if matrices and (a.dim() != 2 or b.dim() != 2):
            return None
        if input_precision is not None and input_precision not in validation.PRECISIONS:
            return None  # 16-bit products resolve any precision to "native": the checks refuse it
        if not fast_launch.enabled():
            return None
        key = launch_key(a, b, out, bias, activation, resolve_precision(a.dtype, input_precision), scales, out_dtype,
                         b_transposed)
        known = _compiled.get(key)  # hashes the key once (a tuple does not keep its hash)
    except (AttributeError, TypeError, RuntimeError):  # not tensors, unhashable, no storage
        return None
    if b_transposed and known is not None and known.stage is not None:
        b = b.T  # copied into a staging buffer: the view itself (a launch reads only data_ptr, the view's too)
    return _relaunch(known, a, b, out, bias, scales, out_dtype)


def epilogue_reference(z: torch.Tensor, bias, activation: str) -> torch.Tensor:
    """The fused epilogue in torch ops (for K = 0, and the activation of autograd's forward)."""
    if bias is not None:
        z = z + bias
    if activation == "relu":
        return torch.relu(z)
    if activation in ("gelu", "gelu_tanh"):
        return torch.nn.functional.gelu(z, approximate="tanh" if activation == "gelu_tanh" else "none")
    if activation == "silu":
        return torch.nn.functional.silu(z)
    return z


def chosen(a, b, precision: str, bias=None, activation: str = "none", *, scales=(None, None), out_dtype=None,
           captured: bool = False):
    """(config, kernel path) that product(a, b, ...) with the same arguments runs with now, eagerly or
    (``captured``) in a CUDA graph, for tables and experiments: the path is "tma", "pointer", or either
    with "+staged" when operands are copied first. FP8 products need their scales and out_dtype (a's
    dtype when None), as product takes them: both are part of the tuning key, and other ones name
    another product, whose config is looked up (and, where tuning is on and nothing is cached, tuned)
    instead."""
    out = _new_out(a, b, out_dtype)
    with device.on_device(a.device):
        launch = Product(a, b, out, precision, bias, activation, scales, captured=captured)
        return tuning.choose_config(launch), launch.path + ("+staged" if launch.staged else "")
