"""The planner's thresholds, as data: one row per GPU architecture.

Each field names the decision in docs/design.md that holds the measurement behind its value. The
rules that read them (rules.py, staging.py, product.py, tuning.py) combine them with the device's own
facts (device.py: SMs, shared memory, L2), so a row holds only what had to be measured.

Experiments and tests force a path by overriding fields for every device:

    with tritonmm.thresholds.override(tma_min_macs=0, few_tiles_per_sm=0):   # the TMA kernel at any size
        ...

or, in pytest, ``monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 0)``. Launches cached under
other values are never reused (relaunch.launch_key keys on OVERRIDES).
"""
import contextlib
from typing import NamedTuple

from . import native


class Thresholds(NamedTuple):
    # Multiply-adds from which aligned products take the TMA kernel (design.md: tma-threshold).
    tma_min_macs: float = 2 ** 31
    # Inside CUDA-graph capture the TMA bar is this many times lower (design.md: captured-tma-threshold).
    captured_tma_divisor: float = 8
    # Eager calls that native.cpp repeats on the TMA kernel (Triton >= 3.8) take the bars a CUDA graph takes: the TMA
    # bar above (not a batch's), the stream model's TMA kernel and transpose (rules.graph_bars; design.md:
    # native-eager-tma).
    eager_native_tma: bool = True
    # Operands TMA cannot read are staged where the product does this many multiply-adds per staged byte
    # (design.md: staging-intensity), or this many where the pointer kernel would read WIDE_READ_BYTES at a
    # time (design.md: staging-wide-reads).
    stage_min_macs_per_byte: float = 16
    wide_read_bytes: int = 8
    stage_min_macs_per_byte_wide_reads: float = 50
    # Eager calls stage only products of at least this many multiply-adds (design.md: eager-staging).
    stage_eager_min_macs: float = 2 ** 31
    # The pointer kernel's 16-bit operands read at most this many bytes at a time are copied K-major
    # (design.md: pointer-staging); reads narrower than async_copy_min_bytes are no cp.async.
    pointer_stage_max_load_bytes: int = 4
    async_copy_min_bytes: int = 4
    # 4-byte reads are staged where the copies pay (design.md: pointer-staging-4-byte).
    pointer_stage_min_macs_per_byte: float = 16
    pointer_stage_small_bytes: int = 2 ** 22
    # 16-bit operands of the TMA kernel whose rows are 16- but not 32-byte aligned are copied into 128-byte aligned
    # rows where the product does this many multiply-adds per byte the copy moves: B's misalignment costs the
    # kernel about twice A's (design.md: row-realign).
    realign_min_macs_per_byte_a: float = 800
    realign_min_macs_per_byte_b: float = 300
    # ... counting this many bytes more per copy: its launch and ramp, about 3 us at 3 TB/s, which a small product's
    # gain does not repay (design.md: realign-fixed-cost); eager calls copy only from realign_eager_min_macs, where
    # the kernel outlasts the copy's host time (design.md: realign-eager).
    realign_fixed_bytes: float = 9e6
    realign_eager_min_macs: float = 2 ** 34
    # Both eager bars above pay for Python's host time. Eager calls that native.cpp repeats, copies included
    # (rules.eager_bars), stage from stage_eager_native_min_macs and realign from realign_eager_native_min_macs
    # instead (design.md: native-staging).
    stage_eager_native_min_macs: float = 2 ** 28
    realign_eager_native_min_macs: float = 0
    # tf32x3 on the TMA kernel splits its operands first from this intensity (design.md: tf32x3-presplit).
    tf32x3_split_min_macs_per_byte: float = 100
    # Products of at most this many 64x64 tiles per SM take the pointer kernel and split-K (design.md: few-tiles), but
    # for the stream model's of long K in CUDA graphs (stream_few_tiles_min_k).
    few_tiles_per_sm: float = 0.5
    # Fewer rows stay on the pointer path and its one-row kernel (design.md: one-row-kernel).
    tma_min_rows: int = 2
    # The TMA kernel's last tiles move back inside C (design.md: tma-shift).
    tma_shift: bool = True
    # Batches TMA can read as they are run on the TMA kernel in one launch (design.md: batched-tma).
    batched_tma: bool = True
    # Other batches run as one product per entry (design.md: batched-slices) only where each entry's 128x128 tiles
    # reach this share of the SMs: an entry alone fills the GPU. Below it the batch's one launch fills them (sliced,
    # attention's p @ v of unaligned rows ran at 0.46-1.07x torch.bmm, geomean 0.71; one launch 0.99-1.42x, 1.22).
    batch_slice_min_fill: float = 1.0
    # Programmatic dependent launch on Hopper (design.md: pdl).
    pdl: bool = True
    # float32 products in IEEE precision (tl.dot's FMA path) take the TMA kernel; false: the pointer kernel, 5-10x
    # faster than the TMA kernel's FMA dot over TMA's swizzled tiles on Triton 3.8, on 3.6 too for x @ W.T
    # (design.md: ieee-pointer).
    ieee_tma: bool = False
    # ... and copy a B that runs along K (x @ W.T) into N-major rows first, from this many multiply-adds in CUDA graphs
    # and from ieee_n_major_eager_min_macs eagerly: the FMA dot ran such a B at 0.32-0.70 of its rate, so that the
    # copy paid from 3 rows on (design.md: ieee-n-major); infinite: never.
    ieee_n_major_min_macs: float = 2 ** 24
    ieee_n_major_eager_min_macs: float = 2 ** 29
    # ... but products of 2 to this many rows with such a B run on the row kernel over B as given, a few rows a program
    # (kernels/gemv.py), where its programs cover the SMs: 2-16 rows ran 0.65-1.58x SGEMM there, 0.21-0.51x copied
    # (design.md: ieee-rows); 1: never.
    ieee_rows_max_rows: int = 16
    # ... and those of ieee_transpose_min_rows (the fewest measured, apart from ieee_rows_max_rows so that its 1 turns
    # only the row kernel off) to this many, against a weight of ieee_transpose_min_n rows or more, from the
    # copy's bars, run as their transpose, out.T = W @ x.T, x.T copied N-major: the weight's rows on the tiles' 128
    # rows, x's few rows on 32 or 64 columns, K in 4 or 8 slices (config_space.IEEE_TRANSPOSED): on fresh draws
    # 0.39-0.49x SGEMM over the copied weight, 0.77-0.92 transposed, ahead on every product, in CUDA graphs and
    # eagerly (design.md: ieee-transpose); 0: never.
    ieee_transpose_max_rows: int = 128
    ieee_transpose_min_rows: int = 17
    ieee_transpose_min_n: int = 1024
    # Plain 16-bit products of at least this many multiply-adds run on the Gluon kernel where Triton >= 3.8
    # runs on Hopper (design.md: gluon-gemm); infinite: never.
    gluon_min_macs: float = 2 ** 37
    # ... where its 128x256 tiles fill at least this share of their waves over the SMs (design.md: gluon-fill).
    gluon_min_fill: float = 0.9
    # Below that, from this many, its wide schedule (192x128 tiles) runs products whose tiles it lays in at most
    # gluon_wide_waves waves over the SMs, the last at least gluon_wide_fill full, and whose rows fill its tiles' at
    # least gluon_wide_row_fill (design.md: gluon-wide, gluon-wide-rows).
    gluon_wide_min_macs: float = 2 ** 31
    gluon_wide_fill: float = 0.7
    gluon_wide_waves: int = 1
    gluon_wide_row_fill: float = 0.8
    # Those whose B rows are 16 but not 32 bytes apart run on its clusters, read as they are (design.md:
    # gluon-misaligned).
    gluon_cluster: bool = True
    # Those of the wide schedule's class whose A or B rows are 16 but not 32 bytes apart run on it read as they
    # are, not on realign's copies (design.md: gluon-wide-as-given).
    gluon_wide_as_given: bool = True
    # Batches of K in (gluon_batched_min_k, gluon_batched_max_k] (attention's q @ k.T over head dims) whose C rows are
    # 32-byte aligned and whose 128x128 tiles make at least gluon_batched_min_waves waves over the SMs run on the
    # Gluon kernel's ping-pong schedule: one consumer's epilogue (C's store) runs under the other's wgmma, where short
    # K leaves the tl kernel's stores exposed (design.md: gluon-batched-short-k); max_k 0: never.
    gluon_batched_min_k: int = 64
    gluon_batched_max_k: int = 128
    gluon_batched_min_waves: float = 4.0
    # tf32x3 products whose operands are split before the kernel (tf32x3_split_min_macs_per_byte) run on the Gluon
    # tf32x3 kernel, plain ones whose C rows TMA stores (design.md: gluon-tf32x3).
    gluon_tf32x3: bool = True
    # 16-bit products of the stream model's class (cost_model.stream_class: 2-64 rows) take its default config on
    # the TMA kernel, and in CUDA graphs run there below its bar of size (rules.stream_tma; design.md: stream-model);
    # false: the few-row rule's default, and the pointer kernel where tma_path says.
    stream_model: bool = True
    # ... products of few tiles (few_tiles_per_sm) among them too, in CUDA graphs, from this K: below it the pointer
    # kernel won and lost alike (design.md: stream-few-tiles); infinite: never.
    stream_few_tiles_min_k: float = 4096
    # ... those of 2 to 32 rows (cost_model.STREAM_MAX_COLS) run as their transpose, C.T = B.T @ A.T, in CUDA graphs:
    # the weight's rows fill the tile's 64 or 128 rows where tiles over A's few rows were mostly TMA's zero fill, and
    # at any K (rules.transposed; design.md: stream-transpose); false: as the rows' tiles.
    stream_transpose: bool = True
    # In CUDA graphs, 16-bit products of few tiles (few_tiles_per_sm) of more rows and columns than the stream model's
    # rows (cost_model.STREAM_MAX_ROWS) take the TMA kernel in slices of K from this K (rules.few_tiles_tma,
    # default_config.few_tiles_split; design.md: few-tiles-tma); infinite: the pointer kernel and its split-K.
    few_tiles_tma_min_k: float = 2048
    # A wave-tail split's last rows run in slices of K (splits.tail_launch) from this K: below it the slices' second
    # launch and workspace cost what they save (design.md: tail-slices); infinite: tail_config's tiles whole.
    tail_slices_min_k: float = 4096
    # ... on 64-row tiles where the tail has at most this many rows, else 128-row ones (design.md: tail-slices).
    tail_slice_narrow_rows: int = 64
    # The default config of the cost model's products on the TMA kernel may be a tile of 128x128 or more in a few
    # slices of K whose units run in one wave (cost_model.one_wave_split; design.md: one-wave-split).
    one_wave_split: bool = True
    # Unbatched 16-bit products of K at most this, with a wave or more of 128x128 tiles, take default_config.PAIRED on
    # the TMA kernel: two persistent programs an SM (design.md: short-k-pairs); 0: never. In place of wave-tail splits
    # only of tiles of at most pair_max_tail_area elements: 128x256's ran ahead of it on 15 of 25 (short-k-pairs).
    pair_max_k: int = 768
    pair_max_tail_area: int = 128 * 128
    # Batches of products (attention's q @ k.T) likewise where K is at most pair_batched_max_k, their entries' tiles
    # counted together toward the wave (design.md: batched-short-k-pairs); 0: never.
    pair_batched_max_k: int = 128
    # A 16-bit batch's default on the pointer kernel takes tiles as wide as N (one column tile, A read once) where it
    # reads A narrowly but async_copy_min_bytes or more at a time and their tiles reach this share of the tiles an
    # entry's share of the SMs wants (default_config._unpaired, heuristic; design.md: one-column-tile); infinite: never.
    one_column_fill: float = 0.75
    # copy_kernel's tiles (design.md: copy-tiles).
    copy_block: int = 64
    copy_small_block: int = 32
    copy_min_programs_per_sm: float = 6
    # An eager call's host time by its launches, for ranking graph-timed configs (design.md: host-floor).
    host_us_per_call: float = 10.0
    host_us_per_launch: float = 8.0
    # An eager call's default config ranks its candidates by the larger of their predicted time and that host time
    # too, and splits K on the pointer kernel only where the whole product is predicted to take longer than two
    # launches' host time (design.md: default-host-floor).
    default_host_floor: bool = True

    def host_us(self, launches: int) -> float:
        """An eager call's host time with this many kernel launches (design.md: host-floor)."""
        return self.host_us_per_call + self.host_us_per_launch * launches


# Measured on the H100 (sm_90). Other architectures take the same numbers until measured there: on
# them (no TMA) the TMA, staging and PDL rows are never read.
TABLE = {"sm90": Thresholds(), "default": Thresholds()}


class _Overrides(dict):
    """The overrides in force. Any change forgets native dispatch's repeated products (native.clear), whose keys,
    unlike relaunch's, hold none: however it is made (override(), monkeypatch.setitem, del, |=)."""


def _forgetting(method):
    def changed(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        native.clear()
        return result
    return changed


# Every method of dict that changes it.
for _name in ("__setitem__", "__delitem__", "__ior__", "update", "clear", "pop", "popitem", "setdefault"):
    setattr(_Overrides, _name, _forgetting(getattr(dict, _name)))
del _name


# Fields forced for every architecture (override); empty in normal use.
OVERRIDES: dict = _Overrides()


def for_device(facts) -> Thresholds:
    """The thresholds of the device whose facts (device.DeviceFacts) are given, overrides applied."""
    row = TABLE[facts.arch]
    return row._replace(**OVERRIDES) if OVERRIDES else row


def key():
    """What launch caches key on: the overrides in force (None without any)."""
    return frozenset(OVERRIDES.items()) if OVERRIDES else None


@contextlib.contextmanager
def override(**fields):
    """Forces threshold fields for every device inside the block (for experiments and tests)."""
    unknown = set(fields) - set(Thresholds._fields)
    if unknown:
        raise TypeError(f"unknown threshold(s) {sorted(unknown)}; the fields are {Thresholds._fields}")
    saved = dict(OVERRIDES)
    OVERRIDES.update(fields)
    try:
        yield
    finally:
        OVERRIDES.clear()
        OVERRIDES.update(saved)
