"""A tiled strided copy, y[r, c] = x[r, c], for staging operands: transposes and aligned copies.

Each program moves one BLOCK x BLOCK tile. Source and destination strides are free, so one
kernel makes a transposing copy (y is a transposed view of a new buffer: K-major TF32, tf32x3
and FP8 operands) and a plain one into a buffer with padded rows (operands TMA cannot read as
they are, and C back into out). Where the two orders differ the compiler stages the tile
through shared memory, so both the reads and the writes are coalesced.
"""
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc, stride_yr, stride_yc, BLOCK: tl.constexpr):
    # int64: either offset can pass 2**31 elements (a matrix strided both ways, a large R).
    r = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    c = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = (r[:, None] < R) & (c[None, :] < C)
    tile = tl.load(x_ptr + r[:, None] * stride_xr + c[None, :] * stride_xc, mask=mask)
    tl.store(y_ptr + r[:, None] * stride_yr + c[None, :] * stride_yc, tile, mask=mask)
