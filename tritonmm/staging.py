"""Copies made before a product's kernel: operands TMA cannot read into 16-byte aligned buffers,
16-bit operands the pointer kernel would read narrowly into K-major ones with K padded, TF32 and FP8
operands K-major for wgmma, an IEEE float32 B N-major for the pointer kernel's FMA dot, and tf32x3's
operands split into TF32 parts. One kernel does every copy
(kernels/copy.py); which operands are copied is decided by rules.py and product.py.
"""
import torch

from . import device, fast_launch, launch, layout, thresholds
from .config_space import cdiv
from .kernels.copy import copy_kernel

# Staged buffers' rows start a multiple of this many bytes apart: TMA needs 16, the TMA kernel reads rows
# 128 bytes apart faster (design.md: row-realign), and a row stride of a multiple of 16 elements lets Triton
# specialize copy_kernel's accesses to 16 bytes on the buffer's side. design.md: row-pad.
ROW_PAD_BYTES = layout.ROW_ALIGN_BYTES


def row_pad(like: torch.Tensor) -> int:
    """Elements a staged row of like's dtype is padded to a multiple of: ROW_PAD_BYTES, and at least 16."""
    return max(16, ROW_PAD_BYTES // like.element_size())

# fast_launch.Compiled of copy_kernel by the facts its specialization depends on: a staged product repeats
# its copies every call, and kernel[grid]'s binding would triple their host cost. design.md: relaunch-cache.
_copy_launches: dict = {}


def _copy_key(x, y, lo=None, pair=None):
    """The key of copy(x, y, lo=lo, pair=pair)'s launch in _copy_launches (copy and cached_copies both ask it)."""
    x2, y2 = pair if pair is not None else (None, None)
    return (x.device, x.dtype, x.shape, y.shape, x.stride(), y.stride(), x.data_ptr() & 15, y.data_ptr() & 15,
            None if lo is None else lo.data_ptr() & 15,
            pair and (x2.dtype, x2.shape, y2.shape, x2.stride(), y2.stride(), x2.data_ptr() & 15, y2.data_ptr() & 15),
            thresholds.key())


def copy(x: torch.Tensor, y: torch.Tensor, traced: bool = False, lo=None, pair=None) -> torch.Tensor:
    """y[:] = x for 2-D tensors of any strides, through copy_kernel; returns y. y may be larger than x
    along either dim: its elements outside x get 0 (a padded K). With ``lo`` (float32; a tensor of y's
    shape and strides), y gets x's TF32 high parts and lo the remainders instead. ``pair`` (x2, y2):
    y2[:] = x2 too, in the same launch (design.md: paired-copies). A transposing copy runs at 2.7-2.9 TB/s
    on an H100, where torch's x.T.contiguous() ran 0.95 TB/s."""
    assert lo is None or lo.stride() == y.stride(), "the kernel writes lo with y's strides"
    assert lo is None or pair is None, "a pair is two plain copies"
    x2, y2 = pair if pair is not None else (x, y)  # unread without a pair
    key = None
    if not traced and fast_launch.enabled():  # a copy seen before: launched before anything else is worked out
        key = _copy_key(x, y, lo, pair)
        known = _copy_launches.get(key)
        if known is not None:
            with device.on_device(x.device):
                if known((x, y, lo, x2, y2), fast_launch.current_stream(device.index(x.device))):
                    return y
    assert all(ny >= nx for ny, nx in zip((*y.shape, *y2.shape), (*x.shape, *x2.shape))), "y holds x"
    (RY, CY), (RY2, CY2) = y.shape, y2.shape
    facts = device.facts(x.device)
    th = thresholds.for_device(facts)

    def programs(block):
        return cdiv(RY, block) * cdiv(CY, block) + (cdiv(RY2, block) * cdiv(CY2, block) if pair else 0)
    block = th.copy_block  # design.md: copy-tiles
    if programs(block) < th.copy_min_programs_per_sm * facts.num_sms:
        block = th.copy_small_block
    grid = (programs(block),)
    if not grid[0]:
        return y
    args = (x, y, lo, x2, y2, *x.shape, RY, CY, *x.stride(), *y.stride(), *x2.shape, RY2, CY2, *x2.stride(),
            *y2.stride())
    split, paired = lo is not None, pair is not None
    pad = y.shape != x.shape or y2.shape != x2.shape
    pdl = launch.pdl(facts, traced)
    with device.on_device(x.device):
        compiled = launch.launcher(copy_kernel, traced)[grid](*args, BLOCK=block, SPLIT_TF32=split, PAIR=paired,
                                                              PAD=pad, PDL=pdl, **launch.options(pdl, 4))
    if key is not None and compiled is not None and not torch.cuda.is_current_stream_capturing():
        fast_launch.remember(_copy_launches, key,
                             fast_launch.Compiled(compiled, grid, (*args[5:], block, split, paired, pad, pdl)))
    return y


def aligned_empty(rows, cols, like: torch.Tensor) -> torch.Tensor:
    """A (rows, cols) row-major view of a new buffer whose rows start a multiple of row_pad(like) elements
    apart (ROW_PAD_BYTES: TMA's 16-byte rule, and the TMA kernel's faster 128)."""
    # new_empty_strided: 1 us on the host against 3.4 for torch.empty and a slice (each staged call makes two)
    pad = row_pad(like)
    return like.new_empty_strided((rows, cols), (cdiv(cols, pad) * pad, 1))


def aligned_like(t: torch.Tensor) -> torch.Tensor:
    """A new buffer of t's shape that TMA can read, in t's own orientation (a transposed view stays
    one, so a copy into it is a plain strided copy, not a transpose)."""
    if t.stride(0) == 1 and t.stride(1) != 1:
        return aligned_empty(t.shape[1], t.shape[0], t).T
    return aligned_empty(*t.shape, t)


def aligned_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """t copied into a buffer TMA can read (aligned_like)."""
    return copy(t, aligned_like(t), traced)


def padded_k(K: int, like: torch.Tensor) -> int:
    """K rounded up to a multiple of 16 bytes of like's elements."""
    per = 16 // like.element_size()
    return cdiv(K, per) * per


def padded_a_like(a: torch.Tensor) -> torch.Tensor:
    """A new K-major buffer for A (M, K): (M, Kp) rows 16-byte aligned, K padded to 16 bytes (padded_k)."""
    return aligned_empty(a.shape[0], padded_k(a.shape[1], a), a)


def padded_b_like(b: torch.Tensor) -> torch.Tensor:
    """A new K-major buffer for B (K, N): a (Kp, N) view of (N, Kp) rows, as padded_a_like's."""
    return aligned_empty(b.shape[1], padded_k(b.shape[0], b), b).T


def padded_a_copy(a: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """A copied into padded_a_like, zeros past K."""
    return copy(a, padded_a_like(a), traced)


def padded_b_copy(b: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """B copied into padded_b_like, zeros past K."""
    return copy(b, padded_b_like(b), traced)


def transpose(x: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """x.T as a new row-major tensor with 16-byte aligned rows."""
    return copy(x.T, aligned_empty(x.shape[1], x.shape[0], x), traced)


def row_major_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """t copied into a row-major buffer (rows 16-byte aligned): A K-major, or B N-major."""
    return transpose(t.T, traced)


def n_major_copy(b: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """B (K, N) or a batch (Z, K, N) along K copied N-major (rows 16-byte aligned) in one 2-D copy: a batch's
    entries stacked as B.T's rows (batch stride N rows; rules.ieee_n_major) become the columns of one (K, Z * N)
    buffer, entry z its columns z * N to (z + 1) * N; one entry, or one broadcast (batch stride 0), is copied once."""
    if b.dim() == 2:
        return row_major_copy(b, traced)
    Z, K, N = b.shape
    if Z == 1 or b.stride(0) == 0:
        return row_major_copy(b[0], traced).expand(Z, K, N)
    assert b.stride(0) == N * b.stride(-1) and b.stride(-2) == 1, "entries stacked as B.T's rows (rules.ieee_n_major)"
    y = transpose(b.as_strided((Z * N, K), (b.stride(-1), 1)), traced)
    return y.as_strided((Z, K, N), (N, y.stride(0), 1))


def column_major_copy(t: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """t copied into a column-major buffer (a transposed view of aligned rows): B K-major."""
    return transpose(t, traced).T


def split_a(a: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """A (M, K), any strides, for the PRESPLIT TMA kernel: a K-major (2M, K) buffer holding its
    TF32 high parts in rows [0, M) and the remainders in rows [M, 2M) (kernels/copy.py, SPLIT_TF32)."""
    rows = a.shape[0]
    buf = aligned_empty(2 * rows, a.shape[1], a)
    copy(a, buf[:rows], traced, lo=buf[rows:])
    return buf


def split_b(b: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """B (K, N) for the PRESPLIT TMA kernel: a (K, 2N) view of a K-major (2N, K) buffer, B.T split."""
    return split_a(b.T, traced).T


def k_major_stagers(a: torch.Tensor, b: torch.Tensor) -> list:
    """The copies that make TF32, tf32x3 and FP8 operands K-major (None: already so): wgmma reads 32-bit
    and 8-bit operands from shared memory only K-major. design.md: k-major-operands."""
    return [row_major_copy if a.stride(1) != 1 else None, column_major_copy if b.stride(0) != 1 else None]


# The plain copies' destinations, by stager: stage() makes any two of them in one launch.
_DESTINATIONS = {aligned_copy: aligned_like, padded_a_copy: padded_a_like, padded_b_copy: padded_b_like}


def _paired(stagers) -> bool:
    """Whether stage() copies both operands in one launch: both stagers plain copies (design.md: paired-copies).
    Spelled out, not all(): relaunches of staged products ask it on every call."""
    return stagers[0] in _DESTINATIONS and stagers[1] in _DESTINATIONS


def cached_copies(stagers, a, b, ya, yb):
    """The copy launches stage() makes of a and b into their staged buffers ya and yb (None: not copied), as copy's
    cache holds them, in launch order: ((fast_launch.Compiled, "ab", "a" or "b": the operands it copies), ...), for
    native.describe; None where a stager is not one plain copy or a launch is not cached (tracing, capture, direct
    launches off)."""
    if any(s is not None and s not in _DESTINATIONS for s in stagers):
        return None
    if _paired(stagers):
        keys = [(_copy_key(a, ya, pair=(b, yb)), "ab")]
    else:
        keys = [(_copy_key(x, y), which) for s, x, y, which in zip(stagers, (a, b), (ya, yb), "ab") if s]
    found = tuple((_copy_launches.get(k), which) for k, which in keys)
    return None if any(c is None for c, _ in found) else found


def stage(stagers, a, b, traced: bool = False) -> tuple:
    """a and b through their stagers (None: as they are); two plain copies go in one launch
    (design.md: paired-copies)."""
    stage_a, stage_b = stagers
    if _paired(stagers):
        ya, yb = _DESTINATIONS[stage_a](a), _DESTINATIONS[stage_b](b)
        copy(a, ya, traced, pair=(b, yb))
        return ya, yb
    return (stage_a(a, traced) if stage_a else a), (stage_b(b, traced) if stage_b else b)
