"""A tiled strided copy, y[r, c] = x[r, c], for staging operands: transposes, aligned copies, TF32 splits.

Each program moves one BLOCK x BLOCK tile. Source and destination strides are free, so one
kernel makes a transposing copy (y is a transposed view of a new buffer: K-major TF32, tf32x3
and FP8 operands) and a plain one into a buffer with padded rows (operands TMA cannot read as
they are). Where the two orders differ the compiler stages the tile
through shared memory, so both the reads and the writes are coalesced.

With SPLIT_TF32, x (float32) is written as two TF32 parts, y the high part and lo the
remainder (y + lo is x to 2**-22 relative; float32 rounds to 2**-24): the operands of tf32x3's three tensor-core products, split once
here instead of on every tile load (kernels/gemm_tma.py, PRESPLIT).

With PAIR, one launch makes two plain copies (y = x, y2 = x2): both operands of a staged product.

y may be larger than x (RY >= R, CY >= C, with PAD): the tiles cover y, and y's elements outside x get
0. A K-major operand whose K is padded to a multiple of 16 bytes (staging.padded_a_copy, padded_b_copy)
is one such copy: zeros along K add nothing to the product.
"""
import triton
import triton.language as tl

from .tiles import let_next_kernel_start, wait_for_previous_kernel


@triton.jit
def _tf32_round(x):
    # To the nearest TF32 (10 mantissa bits; ties away from zero, as cvt.rna.tf32.f32): add half
    # of the dropped part, then drop it. Only for remainders, which are too small to round to Inf.
    return (((x.to(tl.uint32, bitcast=True) + 0x1000) & 0xFFFFE000)).to(tl.float32, bitcast=True)


@triton.jit
def _move(x_ptr, y_ptr, lo_ptr, x_offs, y_offs, load_mask, mask, PAD: tl.constexpr, SPLIT_TF32: tl.constexpr):
    if load_mask is None:
        tile = tl.load(x_ptr + x_offs)
    elif PAD:  # y's elements outside x (its padding) get 0
        tile = tl.load(x_ptr + x_offs, mask=load_mask, other=0)
    else:  # no other=: Triton 3.6 cannot cast the 0 to an FP8 type (an FP8 operand's K-major copy)
        tile = tl.load(x_ptr + x_offs, mask=load_mask)
    if SPLIT_TF32:
        # The high part is x truncated to TF32 (Inf and NaN stay whole), so the remainder x - hi
        # (exact) has x's sign; it is rounded to TF32, as the tensor cores would truncate it.
        hi = (tile.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)
        # A NaN whose payload lies only in the dropped bits would read as Inf: a quiet NaN instead.
        hi = tl.where(tile != tile, float("nan"), hi)
        lo = tl.where(tl.abs(tile) < float("inf"), _tf32_round(tile - hi), 0.0)
        # A zero remainder (x is a TF32 value, or an Inf) becomes float32's smallest normal value
        # of x's sign. Every remainder of a nonzero x then has x's sign, and a remainder times an
        # Inf is an Inf of the sign IEEE gives x times it: never NaN from 0 * Inf, nor an Inf
        # of the other sign. 2**-126 is below x's own rounding (2**-24 |x|) for |x| >= 2**-102;
        # smaller x keep a zero remainder.
        tiny = tl.where(tile < 0, -1.1754943508222875e-38, 1.1754943508222875e-38)
        lo = tl.where((lo == 0) & (tl.abs(tile) >= 1.9721522630525295e-31), tiny, lo)
        tl.store(lo_ptr + y_offs, lo, mask=mask)
        tile = hi
    tl.store(y_ptr + y_offs, tile, mask=mask)


@triton.jit
def _copy_tile(x_ptr, y_ptr, lo_ptr, tile, R, C, RY, CY, stride_xr, stride_xc, stride_yr, stride_yc,
               BLOCK: tl.constexpr, PAD: tl.constexpr, SPLIT_TF32: tl.constexpr):
    # Tiles numbered along one axis, row tiles by column tiles: a grid's second axis stops at 65535
    # tiles, and a K-major copy of a row-major B has K columns. int64 throughout: either offset can pass
    # 2**31 elements (a matrix strided both ways, a large R), and so can a tile's end near R = 2**31.
    tiles_c = tl.cdiv(tile * 0 + CY, BLOCK)  # over y; in int64 (as tile): C + BLOCK - 1 passes int32 near 2**31
    tile_r, tile_c = tile // tiles_c, tile % tiles_c
    r = tile_r * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    c = tile_c * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    x_offs = r[:, None] * stride_xr + c[None, :] * stride_xc
    y_offs = r[:, None] * stride_yr + c[None, :] * stride_yc
    if (tile_r + 1) * BLOCK <= R and (tile_c + 1) * BLOCK <= C:
        # An inner tile, unmasked: a mask that varies along the contiguous dim (c < C with C not a
        # multiple of 16) keeps the compiler to one element an access on both sides. Unmasked, a side
        # whose row stride Triton knows to be a multiple of 16 elements (staging.row_pad) from a 16-byte
        # aligned base moves 16 bytes an access (PTX for sm_90: st.global.v4 into rows of 4112 bf16,
        # 2-byte stores into rows of 4104).
        _move(x_ptr, y_ptr, lo_ptr, x_offs, y_offs, None, None, PAD, SPLIT_TF32)
    else:
        _move(x_ptr, y_ptr, lo_ptr, x_offs, y_offs, (r[:, None] < R) & (c[None, :] < C),
              (r[:, None] < RY) & (c[None, :] < CY), PAD, SPLIT_TF32)


@triton.jit
def copy_kernel(x_ptr, y_ptr, lo_ptr, x2_ptr, y2_ptr, R, C, RY, CY, stride_xr, stride_xc, stride_yr, stride_yc,
                R2, C2, RY2, CY2, stride_x2r, stride_x2c, stride_y2r, stride_y2c,
                BLOCK: tl.constexpr, SPLIT_TF32: tl.constexpr, PAIR: tl.constexpr, PAD: tl.constexpr,
                PDL: tl.constexpr):
    wait_for_previous_kernel(PDL)
    # One program a BLOCK x BLOCK tile. PAIR: a second copy, y2 = x2, in the same launch, its tiles
    # numbered after the first's (a staged product's two operands: one launch's latency, not two).
    # PAD: a y larger than its x, in either copy.
    pid = tl.program_id(0).to(tl.int64)
    tiles = tl.cdiv(pid * 0 + RY, BLOCK) * tl.cdiv(pid * 0 + CY, BLOCK)  # y's; int64, as in _copy_tile
    if PAIR and pid >= tiles:
        _copy_tile(x2_ptr, y2_ptr, lo_ptr, pid - tiles, R2, C2, RY2, CY2, stride_x2r, stride_x2c, stride_y2r,
                   stride_y2c, BLOCK, PAD, False)
    else:
        _copy_tile(x_ptr, y_ptr, lo_ptr, pid, R, C, RY, CY, stride_xr, stride_xc, stride_yr, stride_yc, BLOCK,
                   PAD, SPLIT_TF32)
    let_next_kernel_start(PDL)
