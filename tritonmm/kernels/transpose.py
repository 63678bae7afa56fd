"""A tiled transposing copy: y (C x R, rows stride_yc apart) = x.T, for staging operands for TMA."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc, stride_yc, BLOCK: tl.constexpr):
    # Each program moves one BLOCK x BLOCK tile; the compiler stages it through shared
    # memory so both the reads and the writes are coalesced.
    # int64: either offset can pass 2**31 elements (a matrix strided both ways, a large R).
    r = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    c = (tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    tile = tl.load(x_ptr + r[:, None] * stride_xr + c[None, :] * stride_xc, mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None] * stride_yc + r[None, :], tile.T, mask=(c[:, None] < C) & (r[None, :] < R))
