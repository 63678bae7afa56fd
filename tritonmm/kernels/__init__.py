"""The block programs, one a file. Each program owns a BLOCK_M x BLOCK_N tile of C, walks K in
BLOCK_K steps and accumulates ``tl.dot`` of one A tile and one B tile per step in fp32; the
compiler stages the tiles through shared memory, pipelines ``num_stages`` steps ahead and
issues tensor-core instructions.

* ``gemm.gemm_kernel``: pointers and masks, any strides and alignment, a batch dimension, and
  split-K for products of few tiles.
* ``gemv.gemv_kernel``: one row of C (or 2, 4 or 8) a program's block of columns, on the FMA units: decode
  products (one row of A), which stream the weight and have no tile to reuse; IEEE float32 of a few rows.
* ``split_k.split_k_reduce_kernel``: split-K's second pass, the slices added in a fixed order.
* ``gemm_tma.gemm_tma_kernel``: TMA tensor descriptors, persistent, operands of 16-byte aligned rows; a
  batch in one launch over 3-D descriptors.
* ``copy.copy_kernel``: a tiled strided copy (operands staged for TMA: K-major copies, aligned rows).
* ``tiles``: what the programs share: the tile order and the fused epilogue.
* ``gluon_gemm``: the same product in Gluon (Triton >= 3.8), warp-specialized; ``gluon_tf32x3``: tf32x3 on split
  operands in Gluon; ``gluon_build`` compiles them for sm_90a without a GPU and reads ptxas's report.
"""


def version(text: str) -> tuple:
    """(major, minor) of a version string such as "3.8.0", "3.10.0rc1" or "2.11.0+cu130": the gates on Triton's and
    torch's versions (gluon_gemm, tritonmm.library, tritonmm.fast_launch) read it."""
    return tuple(int("".join(c for c in part if c.isdigit()) or 0) for part in text.split(".")[:2])


def overlaps(x, y) -> bool:
    """Whether two tensors touch a common byte (an out= that overlaps an operand the kernel still reads): their
    [first, last + 1) byte ranges meet; an empty tensor touches none (torch strides are never negative). The
    argument checks (tritonmm.validation, gluon_args) ask it."""
    if x.numel() == 0 or y.numel() == 0:
        return False
    (x0, x1), (y0, y1) = (_byte_range(t) for t in (x, y))
    return x0 < y1 and y0 < x1


def _byte_range(t) -> tuple:
    start = t.data_ptr()
    return start, start + (sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) * t.element_size()
