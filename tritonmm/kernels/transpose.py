"""A tiled transposing copy: y (C x R, contiguous) = x.T, for staging TF32 operands K-major."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_xc, BLOCK: tl.constexpr):
    # Each program moves one BLOCK x BLOCK tile; the compiler stages it through shared
    # memory so both the reads and the writes are coalesced.
    r = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None].to(tl.int64) * stride_xr + c[None, :] * stride_xc,
                   mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None].to(tl.int64) * R + r[None, :], tile.T, mask=(c[:, None] < C) & (r[None, :] < R))
