"""The tile spaces, their pruning and the no-tuning heuristic."""
import pytest
import torch

from tritonmm import config_space as cs, default_config, splits

H100_SMEM = 232448


def test_every_config_fits_an_h100_on_both_paths():
    for fam in ("16bit", "fp8", "tf32", "tf32x3", "ieee"):
        size = {"16bit": 2, "fp8": 1}.get(fam, 4)
        for cfg in cs.space(fam):
            out = 2 if fam == "fp8" else None  # FP8 products write 16-bit C
            assert cs.smem_bytes(cfg, size, tma=True, out_bytes=out) <= H100_SMEM, (fam, cfg)


def test_smem_estimate():
    cfg = cs.make_config(128, 256, 64, 3, 8)
    assert cs.smem_bytes(cfg, 2, tma=False) == 3 * (128 + 256) * 64 * 2 + 1024
    assert cs.smem_bytes(cfg, 2, tma=True) == 3 * (128 + 256) * 64 * 2 + 128 * 128 * 2 + 1024


def test_prune_drops_what_does_not_fit():
    space = cs.space("16bit")
    # 160 KB: some configs fit; none fits 120 KB (GPUs of ~100 KB take prune's
    # shallower-stage fallback, tested below).
    kept, dropped = cs.prune(space, 4096, 4096, 4096, 2, 160_000, tma=True)
    assert kept and all(cs.smem_bytes(c, 2, True) <= 160_000 for c in kept)
    assert dropped["shared memory"] == len(space) - len(kept) > 0
    assert all(c in space for c in kept)  # as they are: some fit, so none is made shallower


def test_prune_drops_oversized_blocks_for_small_shapes():
    kept, dropped = cs.prune(cs.space("16bit"), 16, 4096, 4096, 2, H100_SMEM, tma=True)
    assert kept and all(c.kwargs["BLOCK_M"] == 64 for c in kept)
    assert dropped.get("BLOCK_M > 64", 0) > 0
    kept, _ = cs.prune(cs.space("16bit"), 4096, 4096, 4096, 2, H100_SMEM, tma=True)
    assert any(c.kwargs["BLOCK_M"] == 128 for c in kept)


def test_prune_always_keeps_one():
    for m, n, k in [(1, 1, 1), (16, 16, 16), (3, 5000, 7)]:
        for fam in ("16bit", "tf32", "ieee"):
            assert cs.prune(cs.space(fam), m, n, k, 4, H100_SMEM, tma=False)[0]


def test_heuristic_gives_every_sm_work_then_large_tiles():
    big = default_config.heuristic(8192, 8192, 8192, torch.float16, "native", 132, 2, H100_SMEM, True)
    assert big.kwargs["BLOCK_M"] * big.kwargs["BLOCK_N"] == 128 * 256
    small = default_config.heuristic(64, 4096, 4096, torch.float16, "native", 132, 2, H100_SMEM, True)
    assert small.kwargs["BLOCK_M"] == 64
    assert small in cs.configs(torch.float16) + cs.narrow_space("16bit")


def test_ieee_default_tile_on_the_pointer_kernel():
    """design.md: ieee-tiles. IEEE float32 on the pointer kernel defaults to 64x128x16 on 4 warps in 3 stages where its
    tiles fill the SMs: first in the list of the tiles the heuristic ties on (64x128 and 128x64, K steps of 16)."""
    for M, N, K in ((4096, 4096, 4096), (4096, 14336, 4096), (2616, 912, 904)):
        cfg = default_config.heuristic(M, N, K, torch.float32, "ieee", 132, 4, H100_SMEM, False)
        assert (cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], cfg.kwargs["BLOCK_K"], cfg.num_warps,
                cfg.num_stages) == (64, 128, 16, 4, 3), (M, N, K)


def test_heuristic_for_few_rows_fills_half_the_sms_then_takes_the_largest_tile():
    """Below cost_model.MIN_ROWS rows, tiles for FEW_ROWS_FILL of the SMs are enough; split-K only below that
    (design.md: few-row-default)."""
    def pick(M, N, K, tma, split=True):
        cfg = default_config.heuristic(M, N, K, torch.bfloat16, "native", 132, 2, H100_SMEM, tma, can_split=split)
        return tuple(cs.as_list(cfg))[:8]  # as_list: ..., SPLIT_K, TAIL (heuristic never pairs)
    # 128 tiles of 64x32 reach half the SMs whole: no slices (64x64 in 4 slices ran 1.28x slower)
    assert pick(59, 4096, 4096, False) == (64, 32, 256, 8, 4, 4, 1, 0)
    # 128 tiles of 64x64 are enough: no split into 256 units, two waves
    assert pick(90, 4096, 4096, False)[:3] + pick(90, 4096, 4096, False)[6:7] == (64, 64, 128, 1)
    # 74 tiles of 64x256 beat 148 of 64x128, whose second wave holds 16
    assert pick(47, 18944, 3584, True)[:2] == (64, 256)
    # too few tiles of any size: the most tiles, split over K
    few = pick(42, 768, 3072, False)
    assert few[:3] == (64, 64, 128) and few[6] > 1
    # the narrow tile only where it reaches half the SMs whole
    assert pick(100, 384, 4096, False)[:2] != (64, 32)
    # the pointer kernel's tiles past POINTER_MAX_TILE where they fit in one wave (23x18944x3584: 64x256 ran 1.12x
    # faster than 64x128), not where they take more (4x128256x4096: 64x256 1.07x slower)
    assert pick(23, 18944, 3584, False)[:2] == (64, 256)
    many = pick(4, 128256, 4096, False)
    assert many[0] * many[1] <= cs.POINTER_MAX_TILE
    # from cost_model.MIN_ROWS rows on, every SM a tile: 128 tiles of 64x64 for 132 SMs are split
    full = pick(128, 4096, 4096, False)
    assert full[:3] + full[6:7] == (64, 64, 128, 2)
    # a batch of more entries than SMs (an entry's share is 1 SM) keeps the pointer kernel's cap
    cfg = default_config.heuristic(100, 256, 4096, torch.bfloat16, "native", 1, 2, H100_SMEM, False)
    assert cfg.kwargs["BLOCK_M"] * cfg.kwargs["BLOCK_N"] <= cs.POINTER_MAX_TILE
    # the narrow tile is pruned apart: a few columns in a large batch do not leave it the only config
    assert default_config.heuristic(65, 8, 16, torch.bfloat16, "native", 2, 2, H100_SMEM, False).kwargs["BLOCK_K"] < 256
    # measured on 16-bit products of 2 or more rows: float32's few rows keep every SM a tile
    tf32 = default_config.heuristic(90, 4096, 4096, torch.float32, "tf32", 132, 4, H100_SMEM, False, can_split=True)
    assert cs.split_k(tf32) > 1


def test_heuristic_gives_few_rows_short_tiles_on_the_tma_kernel_only():
    """Up to SHORT_MAX_ROWS rows a 64-row TMA box is mostly zero-filled rows past A's end (design.md: short-tiles)."""
    for M in (2, 16, 32):
        cfg = default_config.heuristic(M, 5120, 5120, torch.bfloat16, "native", 132, 2, H100_SMEM, True)
        assert cfg in cs.short_space("16bit") and cfg.kwargs["BLOCK_M"] == 16, M
        assert default_config.heuristic(M, 5120, 5120, torch.bfloat16, "native", 132, 2, H100_SMEM, False).kwargs["BLOCK_M"] >= 64
    assert default_config.heuristic(33, 5120, 5120, torch.bfloat16, "native", 132, 2, H100_SMEM, True).kwargs["BLOCK_M"] >= 64
    assert default_config.heuristic(16, 5120, 5120, torch.float32, "tf32", 132, 4, H100_SMEM, True).kwargs["BLOCK_M"] >= 64


def test_short_tiles_only_for_few_rows_of_16_bit_operands():
    assert cs.short("16bit", cs.SHORT_MAX_ROWS) == cs.short_space("16bit") != []
    assert cs.short("16bit", cs.SHORT_MAX_ROWS + 1) == []
    assert cs.short("tf32", 16) == cs.short("fp8", 16) == []  # measured for 16-bit products only
    # tuning keys bucket M: the rows that get short tiles never share a key with rows that do not
    assert cs.tuning_bucket(cs.SHORT_MAX_ROWS) < cs.tuning_bucket(cs.SHORT_MAX_ROWS + 1)
    for cfg in cs.short_space("16bit"):
        assert cfg.kwargs["BLOCK_M"] == 16 and cs.smem_bytes(cfg, 2, tma=True) <= H100_SMEM


def test_bucket():
    assert [cs.bucket(n) for n in (1, 16, 17, 100, 128, 129, 4096, 14336)] == [16, 16, 32, 128, 128, 256, 4096, 16384]
    assert [cs.tuning_bucket(n) for n in (1, 16, 17, 24, 25, 100, 2049, 3072, 3073, 4096, 14336)] == \
        [16, 16, 24, 24, 32, 128, 3072, 3072, 4096, 4096, 16384]


def test_family():
    assert cs.family(torch.bfloat16, "native") == "16bit"
    assert cs.family(torch.float32, "ieee") == "ieee"
    assert cs.family(torch.float32, "tf32") == "tf32"


def test_smem_estimate_counts_a_matrix_bias_tile():
    cfg = cs.make_config(128, 256, 64, 4, 8)
    plain = cs.smem_bytes(cfg, 2, tma=True)
    assert cs.smem_bytes(cfg, 2, tma=True, matrix_bias=True) == plain + 128 * 256 * 2
    assert plain <= H100_SMEM < cs.smem_bytes(cfg, 2, tma=True, matrix_bias=True)  # fits without the bias tile only
    kept, why = cs.prune(cs.space("16bit"), 4096, 4096, 4096, 2, H100_SMEM, tma=True, matrix_bias=True)
    assert cfg not in kept and why["shared memory"] > 0 and kept


@pytest.mark.parametrize("fam", ["16bit", "fp8", "tf32", "tf32x3", "ieee"])
@pytest.mark.parametrize("limit", [65536, 49152])
def test_small_shared_memory_keeps_configs_with_fewer_stages(fam, limit):
    """On a GPU with far less shared memory than Hopper's, no config of the space fits as it is:
    the space comes back with shallower pipelines, not empty (tuning an empty space fails)."""
    size = {"16bit": 2, "fp8": 1}.get(fam, 4)
    kept, why = cs.prune(cs.space(fam), 4096, 4096, 4096, size, limit, tma=False)
    assert kept and all(cs.smem_bytes(c, size, tma=False) <= limit for c in kept)
    assert all(c.num_stages >= 1 for c in kept) and len(set(map(str, kept))) == len(kept)
    dtype = {"16bit": torch.float16, "fp8": torch.float8_e4m3fn}.get(fam, torch.float32)
    cfg = default_config.heuristic(4096, 4096, 4096, dtype, fam, 46, size, limit, False)
    assert cs.family(dtype, fam) == fam
    assert cs.smem_bytes(cfg, size, tma=False) <= limit


def test_wave_tail_rule():
    # 3072^3 on 128x256 tiles: 288 tiles on 132 SMs, a third wave of 24; whole waves cover 2816 rows
    assert splits.tail_rows(3072, 3072, 128, 256, 132) == 2816
    assert splits.tail_rows(1536, 1536, 128, 128, 132) == 1408  # 144 tiles: one wave and 12
    assert splits.tail_rows(2560, 2560, 128, 256, 132) == 0  # 200 tiles: the last wave half full
    assert splits.tail_rows(4096, 4096, 128, 256, 132) == 0  # 512 tiles: 3 waves and 116
    assert splits.tail_rows(1024, 1024, 128, 256, 132) == 0  # 32 tiles: no whole wave
    assert splits.tail_rows(8448, 2048, 128, 256, 132) == 0  # 528 tiles: whole waves, no tail
    assert splits.tail_config(256, 3072, 132).kwargs["BLOCK_N"] == 128  # 96 tiles of 64x128
    assert splits.tail_config(128, 1536, 132).kwargs["BLOCK_N"] == 64  # 24 of 64x128: 48 of 64x64 instead
    space = cs.space("16bit")
    variants = splits.with_tail(space, 3072, 3072, 132)
    tails = [c for c in variants if cs.tail(c)]
    # one variant per tile shape of 128 rows or more whose last wave is small: 128x256 (24 of 132),
    # 128x128 (576 tiles: 4 waves and 48) and 256x128 (288 tiles: 2 waves and 24); 64-row tiles are not split
    assert {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]) for c in tails} == {(128, 256), (128, 128), (256, 128)}
    assert len(tails) == 3 and len(variants) == len(space) + 3
    assert splits.with_tail(space, 4096, 4096, 132) == space


def test_a_wave_tail_over_long_k_runs_in_slices():
    """A wave tail's rows run on 128x128 tiles in the most slices of K, up to 4, whose units fit one wave, where K is
    at least the bar (design.md: tail-slices); tail_config's tiles whole where K is shorter or one slice fills a wave.
    The probe's products: (rows, N, K) of their tails."""
    def pick(rows, N, K, min_k=4096):
        cfg, split = splits.tail_launch(rows, N, K, 132, min_k)
        return split if split > 1 else cs.as_list(cfg)[:3]
    assert pick(256, 768, 13712) == 4  # 3072x768x13712 TN: 12 tiles of 128x128 (11 would fit)
    assert pick(80, 5120, 13824) == 3  # 1744x5120x13824 NT: 40 tiles
    assert pick(10, 1024, 4096) == 4  # 4234x1024x4096 NT: 8 tiles of 64x128, 64 K steps: 16 a slice
    assert splits.tail_launch(24, 5120, 13824, 132, 4096)[0] is splits.TAIL_SLICE_NARROW  # 408x5120x13824: 3 of 40
    assert splits.tail_launch(24, 5120, 13824, 132, 4096, narrow_rows=0)[0] is splits.TAIL_SLICE_TILE
    assert pick(528, 1024, 4096) == 3  # 8976x1024x4096 NT: 40 tiles
    assert pick(35, 13824, 5120) == [64, 128, 64]  # 931x13824x5120 NT: 108 tiles, one wave already
    assert pick(448, 2240, 2240) == [64, 128, 64]  # 2240^3: K under the bar
    assert pick(256, 768, 3072) == [64, 64, 128]  # K under the bar
    assert pick(256, 768, 3072, min_k=0) == 3  # the bar lowered: 48 K steps, 16 a slice
    assert pick(256, 768, 1000, min_k=0) == [64, 64, 128]  # 16 K steps: no room for two slices


def test_config_lists_round_trip():
    for cfg in (cs.make_config(128, 256, 64, 4, 8), cs.make_config(64, 64, 128, 4, 4, SPLIT_K=4),
                cs.make_config(128, 256, 64, 3, 8, GROUP_M=16, TAIL=1), cs.make_config(128, 128, 64, 3, 4, PER_SM=2)):
        assert cs.from_list(cs.as_list(cfg)).kwargs == cfg.kwargs
    assert cs.from_list([64, 64, 32, 8, 4, 3]).kwargs == cs.make_config(64, 64, 32, 3, 4).kwargs  # before SPLIT_K
    assert cs.from_list([64, 64, 32, 8, 4, 3, 2]).kwargs == cs.make_config(64, 64, 32, 3, 4, SPLIT_K=2).kwargs
    assert cs.from_list([64, 64, 32, 8, 4, 3, 1, 1]).kwargs == cs.make_config(64, 64, 32, 3, 4, TAIL=1).kwargs
    # PER_SM is the planner's: the kernel takes NUM_SMS, the persistent grid's programs (PER_SM an SM)
    paired = cs.make_config(128, 128, 64, 3, 4, PER_SM=2)
    assert cs.kernel_params(paired) == cs.kernel_params(cs.variant(paired, PER_SM=1))
    assert cs.kernel_params(paired, 132)["NUM_SMS"] == 264 and cs.variant(paired, PER_SM=1).kwargs.get("PER_SM") is None


def test_narrow_tiles_only_where_64x64_tiles_leave_sms_idle():
    wide = cs.narrow("16bit", 64, 4096, 132)  # 64 tiles of 64x64 for 132 SMs: decode
    assert wide == cs.narrow_space("16bit") and all(c.kwargs["BLOCK_N"] < 64 for c in wide)
    assert cs.narrow("16bit", 1024, 4096, 132) == []  # 1024 tiles
    assert cs.narrow("tf32", 64, 4096, 132) == []  # measured for 16-bit products only
    for cfg in cs.narrow_space("16bit"):
        assert cs.smem_bytes(cfg, 2, tma=True) <= H100_SMEM


def test_one_row_products_tune_apart_and_take_the_one_row_kernel():
    """M = 1 keys apart from 2-16 rows (the one-row kernel would run 16 rows 16 times over); the
    heuristic gives one row its kernel where the programs cover every SM and B runs along K."""
    assert cs.tuning_shape(1, 4096, 4096)[0] == 1 and cs.tuning_shape(2, 4096, 4096)[0] == 16
    first = cs.gemv_space()[0]
    assert cs.is_gemv(first) and not any(cs.is_gemv(c) for fam in ("16bit", "tf32", "fp8") for c in cs.space(fam))
    wide = 132 * first.kwargs["BLOCK_N"]
    assert default_config.one_row(1, wide, 1, 132, True) == first
    assert default_config.one_row(1, wide - first.kwargs["BLOCK_N"], 1, 132, True) is None  # one SM without a program
    assert default_config.one_row(1, wide // 4, 4, 132, True) == first  # a batch of four covers them
    assert default_config.one_row(2, wide, 1, 132, True) is None and default_config.one_row(1, wide, 1, 132, False) is None
    for cfg in cs.gemv_space():
        assert cs.smem_bytes(cfg, 4, tma=False) <= H100_SMEM


def test_heuristic_gives_the_pointer_kernel_no_tma_only_config():
    """A config measured on the TMA kernel only (config_space.TMA_ONLY) never comes from the heuristic
    for the pointer kernel, though it would win the tie-break there, except for 16-bit products of fewer than
    cost_model.MIN_ROWS rows (design.md: few-row-default); on the TMA kernel it may."""
    def pick(tma):
        return default_config.heuristic(4096, 4096, 4096, torch.bfloat16, "native", 132, 2, 232448, tma)
    assert not cs.tma_only(pick(False))
    shape = (1024, 16384, 4096)
    assert not cs.tma_only(default_config.heuristic(*shape, torch.bfloat16, "native", 132, 2, 232448, False))
    assert any(cs.tma_only(c) for c in cs.space("16bit"))  # in the space: the rule has something to keep out


def test_tall_tile_fits_the_tma_kernel_only_where_it_can_serve(monkeypatch):
    """256x128 (tall products, design.md: tall-tile): fits Hopper's shared memory with the TMA store's half tile,
    not with a matrix bias's layout conversion besides; pruned for M <= 128; never the heuristic's pick, on
    either path, though the largest-tile rule would give it to short, wide products."""
    tall = cs.make_config(256, 128, 64, 4, 8)
    assert tall in cs.space("16bit") and cs.tuned_tma_only(tall)
    assert not any(cs.tuned_tma_only(c) for c in cs.space("16bit") if c != tall)
    assert cs.smem_bytes(tall, 2, tma=True) <= H100_SMEM < cs.smem_bytes(tall, 2, tma=True, matrix_bias=True)
    assert tall in cs.prune(cs.space("16bit"), 8192, 272, 4096, 2, H100_SMEM, tma=True)[0]
    assert tall not in cs.prune(cs.space("16bit"), 128, 4096, 4096, 2, H100_SMEM, tma=True)[0]
    assert tall not in cs.prune(cs.space("16bit"), 4096, 4096, 4096, 2, H100_SMEM, tma=True, matrix_bias=True)[0]
    # 520x6144: 144 tiles of 256x128 against 120 of 128x256; the rule alone would pick the tall tile.
    shapes = ((520, 6144, 1024), (1100, 3456, 1024), (8192, 272, 4096), (4096, 4096, 4096))
    for shape in shapes:
        for tma in (True, False):
            assert default_config.heuristic(*shape, torch.bfloat16, "native", 132, 2, H100_SMEM, tma) != tall
    assert [n for n in (130, 256, 272, 384, 400, 4096, 4200) if cs.tall_tile_serves(n)] == [272, 384, 4200]
    monkeypatch.setattr(cs, "TUNED_TMA_ONLY", set())  # without the exclusion, the rule picks it there
    assert default_config.heuristic(520, 6144, 1024, torch.bfloat16, "native", 132, 2, H100_SMEM, True) == tall


def test_prune_keeps_a_deep_pipeline_on_the_tma_kernel_where_k_fills_it():
    """64x64x128 with 6 stages (config_space.DEEP) on the TMA kernel where K holds at least 6 K steps of 128, its
    4-stage twin for shorter K and on the pointer kernel (design.md: deep-64x64); both fit Hopper's shared memory."""
    deep, twin = cs.make_config(64, 64, 128, 6, 4), cs.make_config(64, 64, 128, 4, 4)
    for K, tma, kept in ((512, True, [twin]), (640, True, [twin]), (768, True, [deep, twin]),
                         (14336, True, [deep, twin]), (14336, False, [twin])):
        out, why = cs.prune([deep, twin], 512, 512, K, 2, 232448, tma)
        assert out == kept, (K, tma)
        assert any(w.startswith("deep pipeline") for w in why) == (deep not in kept)
    space = cs.configs(torch.bfloat16, "native")
    assert space.index(deep) == space.index(twin) - 1  # ties go to the deep one
    split = cs.make_config(64, 64, 128, 6, 4, SPLIT_K=4)  # slices of a 2088-long K: 5 steps of 128
    assert cs.too_deep(split, 2088, True) and not cs.too_deep(split, 3072, True) and cs.too_deep(split, 3072, False)
    assert not cs.too_deep(twin, 128, False)


def test_default_takes_the_deep_pipeline_on_the_tma_kernel_only():
    """The few-row default of 96x4096x14336 x @ W.T: 64x64x128 with 6 stages on the TMA kernel, 4 on the pointer
    kernel (design.md: deep-64x64)."""
    for tma, stages in ((True, 6), (False, 4)):
        cfg = default_config.heuristic(96, 4096, 14336, torch.bfloat16, "native", 132, 2, 232448, tma)
        assert cs.as_list(cfg)[:3] == [64, 64, 128] and cfg.num_stages == stages, tma
