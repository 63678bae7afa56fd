"""The planner's rules, in one place: which kernel a product takes and which operands are copied
first. Each reads the device's facts and its row of thresholds.py; each threshold cites its decision
in docs/design.md.

    tma_path         the TMA kernel (Hopper) or the pointer kernel (design.md: tma-threshold, few-tiles,
                     staging-intensity, eager-staging); graph_bars, a CUDA graph's bars (native-eager-tma)
    stream_tma       few-row products on the TMA kernel in CUDA graphs, below tma_path's size bar, few tiles from
                     long K (design.md: stream-model, stream-few-tiles); few_tiles_tma, few tiles of more rows
    transposed       few-row products run as their transpose where stream_tma holds (design.md: stream-transpose),
                     IEEE float32 x @ W.T of 17-128 rows eagerly too (ieee-transpose)
    pointer_staging  which 16-bit operands the pointer kernel reads from K-major padded copies (pointer-staging)
    ieee_n_major     an IEEE float32 B along K copied N-major for the pointer kernel's FMA dot (ieee-n-major)
    row_kernel       IEEE float32 products of a few rows on the row kernel over such a B as given (design.md: ieee-rows)
    presplit         tf32x3 operands split into TF32 parts before the TMA kernel (design.md: tf32x3-presplit)
    runs_opaque      whether a traced product is left to run when the compiled graph runs (opaque-operator)
    realign          whether a TMA operand whose rows are not 128-byte aligned is copied into aligned ones
                     (design.md: row-realign, realign-fixed-cost, realign-eager); tma_copies, every copy TMA needs
    batched_tma      whether a batch of products runs on the TMA kernel in one launch (design.md: batched-tma)
    batch_slices     whether a batch of products runs as one unbatched product per entry (batched-slices)
    gluon            whether a product on the TMA path runs on the Gluon kernel instead (Triton >= 3.8; gluon-gemm)
    gluon_as_given   which Gluon schedule runs a product whose rows TMA reads slowly over the operands as they
                     are: its clusters or its wide schedule (gluon-misaligned, gluon-wide-as-given)
    gluon_batched    a batch of short K on the Gluon kernel's ping-pong (Triton >= 3.8; gluon-batched-short-k)
    gluon_tf32x3     whether a tf32x3 product on split operands runs on the Gluon tf32x3 kernel (gluon-tf32x3)
    tma_precision    whether a product of a precision may take the TMA kernel: not IEEE float32 (ieee-pointer)
"""
import torch

from . import config_space, cost_model, device, layout, splits, thresholds, validation
from .config_space import cdiv

# The Gluon kernel's schedules the planner runs (kernels/gluon_gemm.py): where rules.gluon says, one consumer
# partition of 8 warps on 128x256x64 tiles, 3 stages, C staged whole (design.md: gluon-gemm), or for mid-size
# products three consumer warpgroups on 192x128x64 tiles (gluon-wide); where rules.gluon_as_given says, for
# large products 128x256x64 tiles in 2-CTA clusters that multicast B, 4 stages, C stored in halves
# (gluon-misaligned).
GLUON_SCHEDULE = "cooperative-s3"
GLUON_WIDE_SCHEDULE = "wide"
GLUON_CLUSTER_SCHEDULE = "cluster"
GLUON_BATCHED_SCHEDULE = "pingpong"  # two consumer warpgroups on alternate 128x128 tiles (gluon-batched-short-k)
GLUON_TF32X3_SCHEDULE = "tf32x3"  # kernels/gluon_tf32x3.py (its NAME): float32 on split operands


def few_tiles(facts, M, N) -> bool:
    """Whether a product has so few 64x64 tiles per SM that the pointer kernel and split-K serve it."""
    return cdiv(M, 64) * cdiv(N, 64) <= thresholds.for_device(facts).few_tiles_per_sm * facts.num_sms


def tma_path(facts, M, N, K, staged_bytes: int, captured: bool = False, read_bytes: int = 2,
             repeated: bool = False) -> bool:
    """The TMA kernel on Hopper for products of more than one row whose tiles fill the GPU, when large
    (aligned operands; lower in CUDA graphs: graph_bars), or when compute-bound enough to pay for staging what TMA
    cannot read (``staged_bytes``: what the copies move, 0 when none is needed; ``read_bytes``: the narrowest read the
    pointer kernel would make instead; eagerly from eager_bars' size, ``repeated``: native.cpp repeats its calls)."""
    th = thresholds.for_device(facts)
    macs = M * N * K
    if not facts.tma or M < th.tma_min_rows or few_tiles(facts, M, N):
        return False
    if staged_bytes:  # unaligned rows: the pointer kernel is slow on narrow reads, so intensity decides (and host time)
        bar = th.stage_min_macs_per_byte_wide_reads if read_bytes >= th.wide_read_bytes else th.stage_min_macs_per_byte
        return macs >= bar * staged_bytes and (captured or macs >= eager_bars(th, repeated)[0])
    return macs >= th.tma_min_macs / (th.captured_tma_divisor if graph_bars(th, captured, repeated) else 1)


def graph_bars(th, captured: bool, repeated: bool) -> bool:
    """Whether a product takes a CUDA graph's TMA bars (tma_path, stream_tma, transposed): captured, or an eager
    call native.cpp repeats on the TMA kernel, whose host time is the pointer kernel's (design.md: native-eager-tma)."""
    return captured or repeated and th.eager_native_tma


def tma_precision(facts, precision: str) -> bool:
    """Whether a product of this precision may take the TMA kernel: IEEE float32 only where ieee_tma (its FMA dot
    ran 5-10x slower there than on the pointer kernel; design.md: ieee-pointer)."""
    return precision != "ieee" or thresholds.for_device(facts).ieee_tma


def stream_tma(facts, dtype, M, N, K, staged_bytes: int, captured: bool, transposed: bool = False,
               repeated: bool = False) -> bool:
    """Whether an unbatched 16-bit product the stream model ranks on the TMA kernel (cost_model.streams) that TMA
    reads as it is runs there in a CUDA graph (graph_bars) below tma_path's bar of multiply-adds: the stream model's
    tiles (16 rows where they cover M, splits of K) stream its weight there; products of few tiles only from K of
    stream_few_tiles_min_k, below which they keep the pointer kernel (design.md: stream-model, stream-few-tiles).
    ``transposed``: a few-row product's transpose (transposed), of few columns, at any K (design.md:
    stream-transpose)."""
    th = thresholds.for_device(facts)
    return graph_bars(th, captured, repeated) and th.stream_model and facts.tma and not staged_bytes and \
        (N if transposed else M) >= th.tma_min_rows and \
        cost_model.streams(facts.arch, config_space.family(dtype, "native"), M, N, 1, facts.num_sms, "tma",
                           facts.hbm_bytes_per_s, transposed) and \
        (transposed or K >= th.stream_few_tiles_min_k or not few_tiles(facts, M, N))


def few_tiles_tma(facts, dtype, M, N, K, staged_bytes: int, captured: bool) -> bool:
    """Whether an unbatched 16-bit product of few tiles (few_tiles) that TMA reads as it is runs on the TMA kernel in
    a CUDA graph, in slices of K (default_config.few_tiles_split): from K of few_tiles_tma_min_k, more rows and
    columns than cost_model.STREAM_MAX_ROWS (fewer rows: stream_tma's; fewer columns: the pointer kernel's, as
    measured). design.md: few-tiles-tma."""
    return captured and facts.tma and not staged_bytes and dtype in (torch.bfloat16, torch.float16) and \
        min(M, N) > cost_model.STREAM_MAX_ROWS and K >= thresholds.for_device(facts).few_tiles_tma_min_k and \
        few_tiles(facts, M, N)


def transposed(facts, a, b, scales, captured: bool, precision: str, repeated: bool = False) -> bool:
    """Whether a product of few rows runs as its transpose, C.T = B.T @ A.T: unbatched real tensors without FP8
    scales. 16-bit products of 2 to STREAM_MAX_COLS rows that TMA reads as they are, against a weight of more than
    STREAM_MAX_ROWS rows, whose transpose is the stream model's on the TMA kernel (stream_tma: in CUDA graphs and where
    graph_bars holds; stream_transpose): the weight's rows fill the tiles' 64 or 128 rows, A's few rows their 16 or 32
    columns (cost_model.STREAM_TILES_T; design.md: stream-transpose). IEEE float32 x @ W.T, eagerly too, of
    ieee_transpose_min_rows to _max_rows rows against ieee_transpose_min_n weight rows or more, from
    ieee_n_major_min_macs (eagerly ieee_n_major_eager_min_macs): x.T as B, copied N-major (ieee_n_major on the
    transpose), on config_space.IEEE_TRANSPOSED's tiles (design.md: ieee-transpose)."""
    ieee = precision == "ieee" and a.dtype == torch.float32
    if not (captured or repeated or ieee) or a.dim() != 2 or scales != (None, None):
        return False
    (M, K), N, th = a.shape, b.shape[1], thresholds.for_device(facts)
    if ieee:
        return layout.layout(b) == "T" and th.ieee_transpose_min_rows <= M <= th.ieee_transpose_max_rows and \
            N >= th.ieee_transpose_min_n and \
            M * N * K >= (th.ieee_n_major_min_macs if captured else th.ieee_n_major_eager_min_macs)
    return th.stream_transpose and stream_tma(facts, a.dtype, N, M, K, layout.tma_copy_bytes(a, b), captured, True,
                                              repeated)


def eager_bars(th, repeated: bool) -> tuple:
    """(stage, realign): the fewest multiply-adds from which an eager call stages operands and realigns rows: for
    Python's host time, or where native.cpp repeats the call, copies included (``repeated``: the Product's, from
    planner.product's ``served``), the lower stage_/realign_eager_native_min_macs (design.md: native-staging)."""
    if repeated:
        return th.stage_eager_native_min_macs, th.realign_eager_native_min_macs
    return th.stage_eager_min_macs, th.realign_eager_min_macs


def pointer_staging(facts, a, b, M, N, K, captured: bool, repeated: bool = False) -> tuple:
    """(copy A, copy B): which of a product's 16-bit operands the pointer kernel reads from K-major copies whose K is
    zero-padded to 16 bytes, as it would read them at most pointer_stage_max_load_bytes at a time; for unbatched real
    16-bit products of more than one row, eagerly only from eager_bars' size (a copy's launch is host time). Reads of
    async_copy_min_bytes or more are staged only where the copies pay."""
    th = thresholds.for_device(facts)
    none = (False, False)
    if M < th.tma_min_rows or a.element_size() != 2 or not (captured or M * N * K >= eager_bars(th, repeated)[0]):
        return none
    widths = layout.read_width(a), layout.read_width(b)
    if min(widths) > th.pointer_stage_max_load_bytes:
        return none
    pad = K % (16 // a.element_size()) != 0
    copy_a, copy_b = pad or widths[0] < 16, pad or widths[1] < 16
    if min(widths) >= th.async_copy_min_bytes:  # asynchronous reads: staged only where the copies pay
        moved = sum(layout.copy_bytes(t) for t, c in ((a, copy_a), (b, copy_b)) if c)
        if moved > th.pointer_stage_small_bytes and M * N * K < th.pointer_stage_min_macs_per_byte * moved:
            return none
    return copy_a, copy_b


def ieee_n_major(facts, b, M, N, K, captured: bool, Z: int = 1) -> bool:
    """Whether an IEEE float32 product of two or more rows on the pointer kernel reads B from an N-major copy: a B
    of two or more columns that runs along K (x @ W.T), from ieee_n_major_min_macs multiply-adds in a CUDA graph and
    from ieee_n_major_eager_min_macs eagerly, where the copy's launch is host time too; a batch of Z (q @ k.T,
    experts' x @ W.T) where one 2-D copy makes every entry N-major: its entries stacked (batch stride N rows of B.T)
    or one broadcast (stride 0) (staging.n_major_copy; design.md: ieee-n-major)."""
    th = thresholds.for_device(facts)
    if b.element_size() != 4 or layout.layout(b) != "T" or M < th.tma_min_rows or N == 1:  # (K, 1): contiguous
        return False
    if row_kernel(facts, "ieee", b, M, N, Z):  # B as given
        return False
    stacked = (0, N * layout.hint(b.stride(-1)))  # a batch's entries as B.T's rows, or one broadcast
    if b.dim() == 3 and layout.hint(b.shape[0]) > 1 and layout.hint(b.stride(0)) not in stacked:
        return False
    return Z * M * N * K >= (th.ieee_n_major_min_macs if captured else th.ieee_n_major_eager_min_macs)


def row_kernel(facts, precision: str, b, M, N, Z=1) -> int:
    """The row kernel's rows a program (config_space.rows_config: 2, 4 or 8) where an IEEE float32 product of 2 to
    ieee_rows_max_rows rows (a batch of Z: its entries') whose B runs along K (x @ W.T) runs on it over B as given, not
    on the pointer kernel over an N-major copy (ieee_n_major): where its programs cover the SMs; else 0. Never for a
    symbolic M (dynamic shapes), which a compiled graph would run at every size (runs_opaque). design.md: ieee-rows."""
    if precision != "ieee" or b.element_size() != 4 or not isinstance(M, int) or b.stride(-2) != 1 or \
            not 2 <= M <= thresholds.for_device(facts).ieee_rows_max_rows:
        return 0
    tile = config_space.rows_config(M).kwargs
    covers = layout.hint(Z) * cdiv(M, tile["BLOCK_M"]) * cdiv(layout.hint(N), tile["BLOCK_N"]) >= facts.num_sms
    return tile["BLOCK_M"] if covers else 0


def presplit(facts, M, N, K, captured: bool) -> bool:
    """Whether a tf32x3 product on the TMA kernel splits its operands into TF32 parts before it runs
    (12 bytes moved per element of A and B: read 4, write both parts), rather than every tile as loaded."""
    th = thresholds.for_device(facts)
    return tma_path(facts, M, N, K, 0, captured) and M * N * K >= th.tf32x3_split_min_macs_per_byte * 12 * (M + N) * K


def _slow_rows(source) -> bool:
    """Whether a TMA source's rows are 16-bit and 16 but not 32 bytes apart, which TMA reads in about three L2
    requests a row where aligned rows take one (design.md: row-realign-cost)."""
    return source.element_size() == 2 and layout.row_bytes(source) % 32 == 16


def realign(facts, source, macs: int, operand: int, captured: bool, repeated: bool = False) -> bool:
    """Whether a 16-bit TMA source (tma_source's matrix) of operand 0 (A) or 1 (B), readable as it is, is copied
    into rows ROW_ALIGN_BYTES apart first: where its rows are 16 but not 32 bytes apart (rows 32 or 64 bytes
    apart cost the kernel too little to pay for the copy) and the product does enough multiply-adds per byte
    the copy moves (realign_min_macs_per_byte_a / _b), the copy's fixed cost counted as realign_fixed_bytes more;
    eagerly only from eager_bars' size, where the copy's host time is hidden."""
    if not _slow_rows(source):
        return False
    th = thresholds.for_device(facts)
    if not captured and macs < eager_bars(th, repeated)[1]:
        return False
    bar = th.realign_min_macs_per_byte_b if operand else th.realign_min_macs_per_byte_a
    return macs >= bar * (layout.copy_bytes(source) + th.realign_fixed_bytes)


def tma_copies(facts, sources, stagers, macs: int, captured: bool, repeated: bool = False) -> list:
    """Per operand of a product on the TMA path (``sources``: layout.tma_source of A and B, None where TMA cannot read
    it as it is), whether it is copied into an aligned buffer first: where TMA cannot read it, or where it is the
    caller's own (its stager None: not copied K-major already) and realign says so."""
    return [source is None or (stager is None and realign(facts, source[0], macs, i, captured, repeated))
            for i, (source, stager) in enumerate(zip(sources, stagers))]


def runs_opaque(a, b, precision: str) -> bool:
    """Whether a traced product goes into the graph as the opaque eager_product, to be planned when
    the graph runs: where product(a, b) on real tensors like these would take the TMA path, could
    split K over few tiles (split-K's second launch and workspace are the planner's), or in ``precision``
    "ieee" could read B from an N-major copy (ieee_n_major in a CUDA graph, the lower bar) or, at a symbolic M, run on
    the row kernel at its example size (row_kernel). Read from strides and storage offsets, which fake tensors have;
    sizes as their example values under dynamic shapes (the choice only moves speed). C, a new (M, N) tensor, is never
    staged (the TMA kernel stores rows it cannot write through pointers)."""
    hint = layout.hint

    def staged_bytes(t):
        size = t.element_size()
        row = t.stride(0) if t.stride(1) == 1 else t.stride(1) if t.stride(0) == 1 else 1
        aligned = hint(row) * size % 16 == 0 and hint(t.storage_offset()) * size % 16 == 0
        return 0 if aligned else 2 * hint(t.shape[0]) * hint(t.shape[1]) * size
    Z, M, K, N = hint(a.shape[0]) if a.dim() == 3 else 1, hint(a.shape[-2]), hint(a.shape[-1]), hint(b.shape[-1])
    facts = device.facts(a.device)
    if precision == "ieee" and (ieee_n_major(facts, b, M, N, K, True, Z) or not isinstance(a.shape[-2], int) and
                                row_kernel(facts, precision, b, M, N, Z)):  # (a symbolic M: planned at each size)
        return True
    if a.dim() != 2:
        return False
    if few_tiles(facts, M, N):
        return splits.split_for(cdiv(M, 64) * cdiv(N, 64), cdiv(K, 64), facts.num_sms) > 1
    return tma_path(facts, M, N, K, staged_bytes(a) + staged_bytes(b))


def batched_tma(facts, a, b, captured: bool) -> bool:
    """Whether a batch of 16-bit products (a (Z, M, K) @ b (Z, K, N)) runs on the TMA kernel in one launch: TMA
    reads both operands as they are (layout.tma_source: 3-D, or an entry broadcast) and the batch, as the rows of
    all its entries, is what tma_path sends there, each entry of more than one row (eager calls native.cpp repeats
    keep the eager bar: design.md native-eager-tma)."""
    Z, M, K = (layout.hint(n) for n in a.shape)
    N = layout.hint(b.shape[-1])
    th = thresholds.for_device(facts)
    if not (facts.tma and th.batched_tma and a.element_size() == 2 and M >= th.tma_min_rows):
        return False
    if layout.tma_source(a) is None or layout.tma_source(b) is None:
        return False
    return tma_path(facts, Z * M, N, K, 0, captured)


def batch_slices(facts, a, b, captured: bool) -> bool:
    """Whether a batched product (a (Z, M, K) @ b (Z, K, N)) runs as Z unbatched products, each on the TMA
    kernel, rather than as one launch of the batched pointer kernel: where every entry alone is large enough for the
    TMA path (tma_path, with the staging its rows would need), so that the batch's launches cost little beside its
    kernels, and the batch is not one the TMA kernel takes whole (batched_tma). Real tensors only."""
    Z, M, K = (layout.hint(n) for n in a.shape)
    N = layout.hint(b.shape[-1])
    if Z < 2 or not facts.tma or batched_tma(facts, a, b, captured):
        return False
    if cdiv(M, 128) * cdiv(N, 128) < thresholds.for_device(facts).batch_slice_min_fill * facts.num_sms:
        return False  # an entry alone would leave SMs idle that the batch's one launch fills
    return tma_path(facts, M, N, K, layout.tma_copy_bytes(a[0], b[0]), captured, layout.narrowest_read(a[0], b[0]))


def _gluon_takes(a, b, c, bias, activation: str, scales) -> bool:
    """Whether the Gluon kernel runs this product: plain (no bias, activation or scales), unbatched 16-bit, A
    row-major and B row-major or K-major with TMA-readable rows, C's rows ending on 16-byte boundaries
    (layout.c_descriptor), where the kernel runs (Triton >= 3.8 on compute capability 9.0)."""
    if a.dim() != 2 or a.dtype not in (torch.bfloat16, torch.float16) or c.dtype != a.dtype or bias is not None \
            or activation != "none" or scales != (None, None):
        return False
    source_a, source_b = layout.tma_source(a), layout.tma_source(b)
    if source_a is None or source_a[1] or source_b is None or not layout.c_descriptor(c):
        return False
    from .kernels import gluon_gemm
    return gluon_gemm.available(a.device)[0]


def gluon(facts, a, b, c, bias, activation: str, scales, fill: bool = True):
    """The Gluon schedule that runs a product the TMA kernel would run (its operands as that kernel reads them), or
    None: one _gluon_takes, on the cooperative schedule from gluon_min_macs multiply-adds where its tiles fill their
    waves (design.md: gluon-gemm, gluon-fill; ``fill`` False: at any fill), else on the wide one from
    gluon_wide_min_macs where _wide_fills (gluon-wide). Never below cost_model.MIN_ROWS rows or columns: the
    schedules' 128- and 192-row tiles would be mostly empty rows (design.md: gluon-few-rows)."""
    if a.dim() != 2:
        return None
    (M, K), N = a.shape, b.shape[1]
    if min(M, N) < cost_model.MIN_ROWS:
        return None
    th = thresholds.for_device(facts)
    if M * N * K >= th.gluon_min_macs and (not fill or _gluon_fills(facts.num_sms, M, N, th.gluon_min_fill)):
        schedule = GLUON_SCHEDULE
    elif M * N * K >= th.gluon_wide_min_macs and _wide_fills(facts.num_sms, M, N, th):
        schedule = GLUON_WIDE_SCHEDULE
    else:
        return None
    return schedule if _gluon_takes(a, b, c, bias, activation, scales) else None


def _gluon_fills(num_sms: int, M, N, least: float) -> bool:
    """Whether the cooperative schedule's tiles of an M x N product fill at least ``least`` of their waves over the
    SMs: it has no wave-tail split or slices of K, so a part-empty last wave costs it a whole round of tiles, which
    the tl kernel's wave-tail split and cost model avoid (design.md: gluon-fill)."""
    from .kernels import gluon_gemm
    s = gluon_gemm.SCHEDULES[GLUON_SCHEDULE]
    return splits.wave_fill(cdiv(M, s.tile_m) * cdiv(N, s.tile_n), num_sms) >= least


def _wide_fills(num_sms: int, M, N, th) -> bool:
    """Whether the wide schedule's 192x128 tiles of an M x N product take at most gluon_wide_waves waves over the
    SMs, the last at least gluon_wide_fill full, where they leave fewer SMs idle than 128x256 ones (1536^2: 96
    tiles against 72; design.md: gluon-wide), and M fills at least gluon_wide_row_fill of their rows (128 rows
    leave a third of each tile idle: gluon-wide-rows)."""
    from .kernels import gluon_gemm
    wide = gluon_gemm.SCHEDULES[GLUON_WIDE_SCHEDULE]
    tiles = cdiv(M, wide.tile_m) * cdiv(N, wide.tile_n)
    waves = cdiv(tiles, num_sms)
    return waves <= th.gluon_wide_waves and tiles - (waves - 1) * num_sms >= th.gluon_wide_fill * num_sms and \
        M >= th.gluon_wide_row_fill * cdiv(M, wide.tile_m) * wide.tile_m


def gluon_as_given(facts, a, b, c, bias, activation: str, scales, captured: bool):
    """The Gluon schedule that runs a product over the caller's operands as they are, before any plan or copy, or
    None: products the TMA kernel would run as they are (tma_path, _gluon_takes) whose rows TMA reads slowly
    (_slow_rows), which realign copies for the `tl` kernel where the product pays for it.
    - gluon's large class (gluon_min_macs) with such B rows: the 2-CTA cluster schedule, which loads each B tile
      once for both CTAs (multicast), halving the L2 requests such rows cost (threshold gluon_cluster;
      design.md: gluon-misaligned).
    - gluon's wide class with such A or B rows (and large products whose 128x256 tiles fill too little of their
      waves, which rules.gluon gives the wide schedule): the wide schedule, where the copy is not paid back
      (threshold gluon_wide_as_given; design.md: gluon-wide-as-given). Where realign would not copy, the plan
      runs the same."""
    if a.dim() != 2:
        return None
    slow_a, slow_b = (source is not None and _slow_rows(source[0]) for source in (layout.tma_source(a),
                                                                                   layout.tma_source(b)))
    if not (slow_a or slow_b):
        return None
    th = thresholds.for_device(facts)
    # The clusters' class at any fill: gluon-fill was set on rows TMA reads whole, and on these rows the clusters
    # led at fills down to 78% (gluon-misaligned: 728x17600x19512 x @ W.T). Other large products below the bar may
    # take the wide schedule, as rules.gluon gives it.
    cluster = slow_b and th.gluon_cluster
    schedule = gluon(facts, a, b, c, bias, activation, scales, fill=not cluster)
    if schedule == GLUON_SCHEDULE and cluster:
        schedule = GLUON_CLUSTER_SCHEDULE
    elif schedule != GLUON_WIDE_SCHEDULE or not th.gluon_wide_as_given:
        return None
    (M, K), N = a.shape, b.shape[1]
    return schedule if tma_path(facts, M, N, K, 0, captured) else None


def gluon_batched(facts, a, b, c, bias, activation: str, scales):
    """The Gluon schedule that runs a batch the TMA kernel would run, or None: plain 16-bit batches (entries as
    _gluon_takes takes a product, stacked as gluon_args.check_batched asks) of K in (gluon_batched_min_k,
    gluon_batched_max_k], C's rows 32-byte aligned, at least gluon_batched_min_waves waves of 128x128 tiles, on the
    ping-pong schedule, where one consumer's store of C runs under the other's wgmma (gluon-batched-short-k)."""
    if a.dim() != 3 or validation.traced(a) or a.numel() == 0:
        return None
    th = thresholds.for_device(facts)
    Z, M, K = a.shape
    N = b.shape[2]
    if not th.gluon_batched_min_k < K <= th.gluon_batched_max_k or c.stride(1) % 16 or \
            Z * cdiv(M, 128) * cdiv(N, 128) < th.gluon_batched_min_waves * facts.num_sms:
        return None
    from .kernels import gluon_args, gluon_gemm
    s = gluon_gemm.SCHEDULES[GLUON_BATCHED_SCHEDULE]
    if M < s.tile_m or N < s.tile_n or not _gluon_takes(a[0], b[0], c[0], bias, activation, scales):
        return None
    try:
        gluon_args.check_batched(a, b, c, s.tile_m, s.tile_n, gluon_gemm.BLOCK_K)
    except (TypeError, ValueError):  # entries not stacked evenly, or a row-major B of K not a multiple of the step
        return None
    return GLUON_BATCHED_SCHEDULE


def gluon_tf32x3(facts, c, bias, activation: str, batched: bool) -> bool:
    """Whether a tf32x3 product whose operands the TMA kernel would read split (presplit) runs on the Gluon tf32x3
    kernel: plain, unbatched, C's rows stored by TMA (layout.c_descriptor), where it runs (design.md: gluon-tf32x3)."""
    if not thresholds.for_device(facts).gluon_tf32x3 or batched or bias is not None or activation != "none" or \
            c.dtype != torch.float32 or not layout.c_descriptor(c):
        return False
    from .kernels import gluon_gemm
    return gluon_gemm.available(c.device)[0]
