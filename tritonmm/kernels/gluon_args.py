"""The Gluon GEMM's operands as TMA can address them (kernels/gluon_gemm.py): the checks that run before any GPU
work, so that a bad argument gets a TypeError or ValueError naming it and the fix, never a fault on the device."""
import torch

from . import overlaps


def check(a, b, out) -> bool:
    """TypeError/ValueError naming the argument and the fix, before any GPU work; returns whether B is read
    K-major (b the transposed view of a row-major N x K weight)."""
    for name, t in (("a", a), ("b", b)) + ((("out", out), ) if out is not None else ()):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be a 2-D matrix (or a, b and out 3-D batches), got shape {tuple(t.shape)}")
        if t.dtype not in (torch.bfloat16, torch.float16):
            raise TypeError(f"{name} is {t.dtype}; the Gluon GEMM takes torch.bfloat16 or torch.float16: "
                            f"convert with {name}.to(torch.bfloat16)")
    if b.dtype != a.dtype:
        raise TypeError(f"a is {a.dtype} but b is {b.dtype}; convert one so that both have the same dtype")
    (M, K), N = a.shape, b.shape[1]
    if b.shape[0] != K:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; b must be "
                         f"({K}, N)")
    # Rows as TMA addresses them: unit stride along them, rows at least a row long and a multiple of 16 bytes
    # (8 16-bit elements) apart: contiguous, or a view of a buffer whose rows are padded (tritonmm's staged
    # copies). An empty operand has no rows to address (torch gives a (16, 0) tensor strides (1, 1)): any do.
    def rows(t, along, length):  # t's rows run along dim `along`, `length` elements each
        step = t.stride(1 - along)
        return t.stride(along) == 1 and (t.shape[1 - along] == 1 or (step >= length and step % 8 == 0))
    # N: TMA stores whole 16-byte chunks, so C's rows must end on one (triton#11583: a row ending inside a chunk
    # of a longer buffer row gets the chunk's rest overwritten). K: contiguous rows are K elements apart.
    for dim, size, why, applies in (("K", K, "a's rows 16-byte aligned", a.stride(0) == K),
                                    ("N", N, "the output's rows to end on a 16-byte boundary", True)):
        if applies and size % 8:
            raise ValueError(f"{dim} = {size} is not a multiple of 8: TMA needs {why}; pad {dim} with zeros to a "
                             "multiple of 8 (torch.nn.functional.pad) and slice the result")
    if a.numel() and not rows(a, 1, K):
        raise ValueError(f"a must be row-major with rows 16-byte aligned, got strides {a.stride()}; pass "
                         "a.contiguous()")
    b_kmajor = b.stride(0) == 1 and not (b.stride(1) == 1 and b.stride(0) >= N) and rows(b, 0, K)
    if b.numel() and not b_kmajor and not rows(b, 1, N):
        raise ValueError(f"b must be row-major K x N or the transposed view w.T of a row-major N x K w, with rows "
                         f"16-byte aligned, got strides {b.stride()}; pass b.contiguous()")
    for name, t in (("a", a), ("b", b)):
        if t.data_ptr() % 16:
            raise ValueError(f"{name} does not start on a 16-byte boundary, as TMA needs; pass {name}.clone()")
    if out is not None:
        if out.shape != (M, N) or out.dtype != a.dtype or (out.numel() and not rows(out, 1, N)) or out.data_ptr() % 16:
            raise ValueError(f"out must be a row-major, 16-byte aligned ({M}, {N}) {a.dtype} tensor with rows 16-byte "
                             f"aligned, got {tuple(out.shape)} {out.dtype} with strides {out.stride()}; pass out=None")
        if overlaps(out, a) or overlaps(out, b):
            raise ValueError("out overlaps a or b, which the kernel still reads while it writes; pass another out")
    return b_kmajor


def check_batched(a, b, out, tile_m: int, tile_n: int, block_k: int) -> bool:
    """check's for a batch, a (Z, M, K) @ b (Z, K, N) into out (Z, M, N), which the kernel reads and writes as 2-D
    views whose rows stack the entries (gluon_gemm.run): each entry as check asks, and entries evenly stacked (or an
    operand broadcast, batch stride 0; one entry's batch strides are free), M and N at least a tile (the last tile of
    each entry moves back inside it), and a row-major B's K a multiple of the K step (a step past K would read the
    next entry's rows). Empty entries pass (nothing is read). Returns whether B is read K-major."""
    for name, t in (("a", a), ("b", b)) + ((("out", out), ) if out is not None else ()):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3:
            raise ValueError(f"{name} must be 3-D (entries, rows, columns), got shape {tuple(t.shape)}")
    Z, M, K = a.shape
    N = b.shape[2]
    if b.shape[0] != Z or (out is not None and out.shape[0] != Z):
        raise ValueError(f"a, b and out must have as many entries, got {tuple(a.shape)}, {tuple(b.shape)} and "
                         f"{None if out is None else tuple(out.shape)}; expand a broadcast operand to {Z} entries")
    if Z == 0:
        return False
    b_kmajor = check(a[0], b[0], None if out is None else out[0])
    if 0 in (M, N, K):  # nothing to read: run returns out as it is, or zeroed where K is 0
        return b_kmajor
    if M < tile_m or N < tile_n:
        raise ValueError(f"a batch's entries must be at least a tile, {tile_m} x {tile_n}, got {M} x {N}; run "
                         "smaller entries with tritonmm.matmul")
    b_entry = N * b.stride(2) if b_kmajor else K * b.stride(1)
    for name, stride, entry in (("a", a.stride(0), M * a.stride(1)), ("b", b.stride(0), b_entry)):
        if Z > 1 and stride not in (0, entry):
            raise ValueError(f"{name}'s entries must follow each other ({name}.stride(0) = {entry}) or be one "
                             f"broadcast (stride 0), got strides {tuple(a.stride() if name == 'a' else b.stride())}; "
                             f"pass {name}.contiguous()")
    if not b_kmajor and b.stride(0) and K % block_k:
        raise ValueError(f"K = {K} is not a multiple of {block_k}: a row-major b's last K step would read the next "
                         "entry's rows; pass b as the transposed view of a (Z, N, K) tensor, or pad K")
    if out is not None:
        if Z > 1 and out.stride(0) != M * out.stride(1):
            raise ValueError(f"out's entries must follow each other (out.stride(0) = {M * out.stride(1)}), got "
                             f"strides {tuple(out.stride())}; pass out=None")
        if overlaps(out, a) or overlaps(out, b):
            raise ValueError("out overlaps a or b, which the kernel still reads while it writes; pass another out")
    return b_kmajor
