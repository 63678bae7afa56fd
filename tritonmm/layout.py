"""Facts about operands' memory that the kernels' paths and hints depend on: TMA readability,
alignment, read widths, layouts and how a bias or FP8 scale broadcasts. Pure functions of tensors."""
import math

import torch


# Rows this many bytes apart are what the TMA kernel reads fastest: a box row of 128 bytes then sits in one L2
# line (design.md: row-realign).
ROW_ALIGN_BYTES = 128


def hint(n) -> int:
    """A size as an int: itself, or under dynamic-shape tracing the example value behind it.
    Choices made from hints (a config) are valid for every size; they only tune speed."""
    return n if isinstance(n, int) else int(n.node.hint if n.node.hint is not None else 4096)


def tma_source(t: torch.Tensor):
    """(matrix whose last dim is contiguous, whether it is t transposed), or None when TMA
    cannot read t: it needs a 16-byte aligned base and 16-byte aligned row strides. A batch (3-D t)
    gives a 3-D source, its entries 16-byte aligned apart too, or, where one entry serves them all
    (a batch stride of 0, or one entry), that entry's 2-D source."""
    size = t.element_size()
    if t.data_ptr() % 16:
        return None
    if t.dim() == 3:
        if t.shape[0] == 1 or t.stride(0) == 0:
            return tma_source(t[0])
        if t.stride(0) * size % 16:
            return None
    if t.stride(-1) == 1 and t.stride(-2) * size % 16 == 0:
        return t, False
    if t.stride(-2) == 1 and t.stride(-1) * size % 16 == 0:
        return t.transpose(-1, -2), True
    return None


def row_bytes(source: torch.Tensor) -> int:
    """Bytes between the rows of a TMA source (tma_source's matrix, last dim contiguous)."""
    return source.stride(-2) * source.element_size()


def c_descriptor(c: torch.Tensor) -> bool:
    """Whether the TMA kernel stores c through a tensor descriptor: row-major (the kernel's store) with
    16-byte aligned rows that end on a 16-byte boundary; else through pointers (kernels/gemm_tma.py, C_DESC).
    A batch's C, as 3-D. TMA stores whole 16-byte chunks (triton#11583): a row of 1001 bf16 elements in a
    buffer of longer rows would get the 7 elements past its end overwritten (design.md: c-through-pointers)."""
    source = tma_source(c)
    return source is not None and not source[1] and source[0].dim() == c.dim() and \
        c.shape[-1] * c.element_size() % 16 == 0


def copy_bytes(t: torch.Tensor) -> int:
    """Bytes a staging copy of t moves: each element read and written once (padding aside)."""
    return 2 * t.numel() * t.element_size()


def vec(t: torch.Tensor) -> int:
    """The most elements, a power of two up to 16 bytes, that divide every stride of t but unit ones of its
    last two dims (a stride of 0 is a multiple of any). A unit stride there is a run that starts at a multiple
    of the kernel's block; a batch stride of 1 counts (z * 1 is no multiple). Dims of size 1 count too: their
    masked lanes still form addresses (an asynchronous copy of 0 bytes from a misaligned one), so only true
    claims are made about them."""
    elements = 16 // t.element_size()
    batch_dims = t.dim() - 2
    for i, stride in enumerate(t.stride()):
        if stride != 1 or i < batch_dims:
            elements = math.gcd(elements, stride)
    return elements


def specialized(t: torch.Tensor) -> bool:
    """Whether Triton's own specialization tells gemm_kernel all VEC would: a 16-byte aligned base and
    strides (of dims above size 1) that are 1 or divisible by 16."""
    return t.data_ptr() % 16 == 0 and all(s == 1 or s % 16 == 0 or n == 1 for n, s in zip(t.shape, t.stride()))


def vec_hint(t: torch.Tensor) -> int:
    """gemm_kernel's VEC_* for t: 0 (no hint) where Triton's specialization says as much, else vec."""
    return 0 if specialized(t) else vec(t)


def alignment(a3, b3, c3, M: int, N: int, K: int, traced: bool = False) -> dict:
    """gemm_kernel's alignment hints for 3-D views of its operands: VEC_* for each tensor (0: none),
    DIV_* the powers of two below 16 that divide the sizes (1: none). Only what Triton's specialization
    does not say already (gemm_kernel's docstring). Traced products claim nothing: their sizes and
    strides may be symbolic, and the compiled graph keeps the hints for every size it is called with."""
    if traced:
        return dict(VEC_A=0, VEC_B=0, VEC_C=0, DIV_M=1, DIV_N=1, DIV_K=1)
    vecs = [vec_hint(t) for t in (a3, b3, c3)]
    div = [1 if n % 16 == 0 else math.gcd(n, 16) for n in (M, N, K)]
    return dict(VEC_A=vecs[0], VEC_B=vecs[1], VEC_C=vecs[2], DIV_M=div[0], DIV_N=div[1], DIV_K=div[2])


def load_bytes(t: torch.Tensor, vec_elements: int) -> int:
    """Bytes the pointer kernel reads of t at a time: VEC elements (0: 16 bytes) where the base is 16-byte
    aligned and its contiguous dim's size is a multiple of them too (the masks along it), else one element."""
    size = t.element_size()
    vec_elements = vec_elements or 16 // size
    if t.data_ptr() % 16:
        return size
    for dim in (-1, -2):
        if t.stride(dim) == 1 and t.shape[dim] > 1:
            return math.gcd(vec_elements, t.shape[dim]) * size
    return size


def read_width(t: torch.Tensor) -> int:
    """Bytes the pointer kernel would read of the caller's t at a time, under the hints it would get."""
    return load_bytes(t, vec_hint(t))


def narrowest_read(a: torch.Tensor, b: torch.Tensor) -> int:
    """The narrowest read the pointer kernel would make of a and b (rules.tma_path's read_bytes); one element
    for other than 16-bit operands, where wide reads were not measured against staging."""
    return min(read_width(a), read_width(b)) if a.element_size() == 2 else a.element_size()


def tma_copy_bytes(a: torch.Tensor, b: torch.Tensor) -> int:
    """What the copies that let TMA read a and b would move: those it cannot read as they are."""
    return sum(copy_bytes(t) for t in (a, b) if tma_source(t) is None)


def layout(t: torch.Tensor) -> str:
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


def row_views(r0: int, r1: int, a, b, c, bias, scale_a, scale_b) -> tuple:
    """(a, b, c, bias, scale_a, scale_b) of rows [r0, r1) of the product c = a @ b: the rows of A and
    C, and of the bias and A's scales where they vary by row."""
    if bias is not None:
        bias = bias.expand(*c.shape)[r0:r1]
    if scale_a is not None and scale_a.numel() > 1:
        scale_a = scale_a[r0:r1]
    return a[r0:r1], b, c[r0:r1], bias, scale_a, scale_b


def row_offsets(r0: int, r1: int, a, b, c, bias, scale_a, scale_b) -> tuple:
    """Bytes from each of (a, b, c, bias, scale_a, scale_b)'s data_ptr to its part in row_views (None: the
    tensor itself). They depend only on the strides and dtypes, so tensors of the same layout share them."""
    given = (a, b, c, bias, scale_a, scale_b)
    return tuple(None if v is t else v.data_ptr() - t.data_ptr()
                 for v, t in zip(row_views(r0, r1, *given), given))


def span(t) -> int:
    """Bytes t spans from its data_ptr (0 for none or an empty tensor)."""
    return 0 if t is None or t.numel() == 0 else \
        (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()
