"""A tiled strided copy, y[r, c] = x[r, c], for staging operands: transposes, aligned copies, TF32 splits.

Each program moves one BLOCK x BLOCK tile. Source and destination strides are free, so one
kernel makes a transposing copy (y is a transposed view of a new buffer: K-major TF32, tf32x3
and FP8 operands) and a plain one into a buffer with padded rows (operands TMA cannot read as
they are, and C back into out). Where the two orders differ the compiler stages the tile
through shared memory, so both the reads and the writes are coalesced.

With SPLIT_TF32, x (float32) is written as two TF32 parts, y the high part and lo the
remainder (y + lo is x to 2**-23 relative, float32's own rounding 2**-24): the operands of tf32x3's three tensor-core products, split once
here instead of on every tile load (kernels/gemm_tma.py, PRESPLIT).
"""
import triton
import triton.language as tl


@triton.jit
def _tf32_round(x):
    # To the nearest TF32 (10 mantissa bits; ties away from zero, as cvt.rna.tf32.f32): add half of
    # the dropped part, then drop it. Rounding can carry into the exponent; near float32's
    # largest value that gives Inf, where the truncated value (still finite) is kept instead.
    bits = x.to(tl.uint32, bitcast=True)
    rounded = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)
    truncated = (bits & 0xFFFFE000).to(tl.float32, bitcast=True)
    return tl.where(tl.abs(rounded) < float("inf"), rounded, truncated)


@triton.jit
def copy_kernel(x_ptr, y_ptr, lo_ptr, R, C, stride_xr, stride_xc, stride_yr, stride_yc,
                BLOCK: tl.constexpr, SPLIT_TF32: tl.constexpr):
    # int64: either offset can pass 2**31 elements (a matrix strided both ways, a large R).
    r = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    c = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = (r[:, None] < R) & (c[None, :] < C)
    tile = tl.load(x_ptr + r[:, None] * stride_xr + c[None, :] * stride_xc, mask=mask)
    y_offs = r[:, None] * stride_yr + c[None, :] * stride_yc
    if SPLIT_TF32:
        # Inf and NaN stay whole in the high part, with a zero remainder: the high parts' product
        # then propagates them as IEEE does, and the remainders' products stay finite.
        finite = tl.abs(tile) < float("inf")
        hi = tl.where(finite, _tf32_round(tile), tile)
        # x - hi is exact; rounded to TF32 too, since the tensor cores would truncate it.
        tl.store(lo_ptr + y_offs, tl.where(finite, _tf32_round(tile - hi), 0.0), mask=mask)
        tile = hi
    tl.store(y_ptr + y_offs, tile, mask=mask)
