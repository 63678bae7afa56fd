"""The default config: chosen from the shape and the device's facts, with no timing. It is what a product
runs with until the tuner has timed its shape (tuning.py), so a new shape's first call benchmarks nothing
(design.md: no-tuning-stall)."""
import triton

from . import config_space, cost_model, layout, rules, splits
from .config_space import cdiv
from .layout import hint


def for_product(plan) -> triton.Config:
    """The default config of a planned product (product.Product): _unpaired's, or PAIRED in place of a tile of
    fewer than 128 rows or columns or a wave-tail split of tiles of at most pair_max_tail_area elements where PAIRED
    serves (paired; design.md: short-k-pairs, batched-short-k-pairs)."""
    cfg = _unpaired(plan)
    k = cfg.kwargs
    narrower = min(k["BLOCK_M"], k["BLOCK_N"]) < 128 and not config_space.is_gemv(cfg)
    tail = config_space.tail(cfg) and k["BLOCK_M"] * k["BLOCK_N"] <= plan.th.pair_max_tail_area
    if (narrower or tail) and config_space.split_k(cfg) == 1 and paired(plan):
        return PAIRED
    return cfg


def _unpaired(plan) -> triton.Config:
    """The row kernel's config where it serves (one row; IEEE float32 of a few rows), else for few rows on the TMA
    kernel the stream model's pick (cost_model.streams), else the cost model's pick among the tuner's candidates where
    the model covers the product (cost_model.covers), else the rule-based heuristic below."""
    facts = plan.facts
    # An eager call pays its launches' host time; a CUDA graph's replay does not (design.md: default-host-floor)
    floor = plan.th.host_us if plan.th.default_host_floor and not plan.captured else None
    one = one_row(hint(plan.M), hint(plan.N), hint(plan.Z), facts.num_sms, plan.row_block == 1)
    if one is not None:
        return one
    if plan.path == "pointer" and plan.row_block > 1:  # IEEE float32 of a few rows (design.md: ieee-rows)
        return config_space.rows_config(hint(plan.M))
    if plan.transposed and plan.precision == "ieee":  # x @ W.T of more rows, transposed (design.md: ieee-transpose)
        return ieee_transposed(hint(plan.N), hint(plan.K), plan.can_split)
    # A traced product's pointers are unknown: its kernel claims no alignment (layout.alignment) either.
    widths = (16, 16) if plan.path == "tma" or plan.traced else tuple(map(layout.read_width, (plan.a, plan.b)))
    narrow = tuple(w < 16 and t.element_size() == 2 for w, t in zip(widths, (plan.a, plan.b)))
    family = config_space.family(plan.dtype, plan.precision, plan.presplit)
    M, N, K, Z = hint(plan.M), hint(plan.N), hint(plan.K), hint(plan.Z)
    if plan.th.stream_model and cost_model.streams(facts.arch, family, M, N, Z, facts.num_sms, plan.path,
                                                   facts.hbm_bytes_per_s, plan.transposed):  # design.md: stream-model
        fits = [c for c in plan.prune(cost_model.stream_candidates(M, N, K))[0]
                if plan.can_split or config_space.split_k(c) == 1]
        streamed = cost_model.stream_pick(fits, facts.arch, M, N, K, facts.num_sms, facts.hbm_bytes_per_s,
                                          plan.operand_bytes, floor)
        if streamed is not None:
            return streamed
    if plan.path == "tma" and not plan.batched and rules.few_tiles_tma(facts, plan.dtype, M, N, K, 0, plan.captured):
        split = few_tiles_split(M, N, K, facts.num_sms, plan.can_split)  # design.md: few-tiles-tma
        if config_space.smem_bytes(split, plan.operand_bytes, True, plan.constants["BIAS"] == "matrix",
                                   plan.out.element_size()) <= facts.smem_bytes:  # (sized for Hopper's 227 KB)
            return split
    if cost_model.covers(facts.arch, family, M, N, Z, facts.num_sms, any(narrow)):
        # Not the tuner's tall tile: where C is stored through pointers its epilogue needs more shared
        # memory than prune() counts, which the tuner survives (it times such a config as unrunnable).
        # Nor PAIRED, whose second program an SM the model does not price: for_product decides it.
        ranked = [c for c in plan.candidates() if not config_space.tuned_tma_only(c) and config_space.per_sm(c) == 1]
        modeled = cost_model.pick(ranked, facts.arch, plan.path, M, N, K, Z, facts.num_sms, facts.hbm_bytes_per_s,
                                  plan.out.element_size(), floor)
        if modeled is not None and plan.th.one_wave_split and plan.path == "tma" and plan.can_split:
            modeled = cost_model.one_wave_split(  # design.md: one-wave-split
                modeled, splits.one_wave_splits(ranked, M, N, K, facts.num_sms), facts.arch, M, N, K, facts.num_sms,
                facts.hbm_bytes_per_s, plan.th.host_us(2),
                plan.out.element_size())
        if modeled is not None:
            return modeled
    # One column tile for batches on the pointer kernel whose A it reads narrowly (narrow: 16-bit operands only) but
    # through cp.async (4-8 bytes at a time; 2-byte reads stall it and ran faster on two 64-wide tiles), N within one
    # such tile, as measured (design.md: one-column-tile). Batches: a rule-chosen tile below the SMs wanted is never
    # split over K.
    one_column = plan.th.one_column_fill if plan.batched and narrow[0] and \
        widths[0] >= plan.th.async_copy_min_bytes and N <= ONE_COLUMN_MAX_N else float("inf")
    cfg = heuristic(M, N, K, plan.dtype, plan.precision, max(1, facts.num_sms // Z), plan.operand_bytes,
                    facts.smem_bytes, plan.path == "tma", plan.constants["BIAS"] == "matrix",
                    plan.can_split and plan.path == "pointer", plan.out.element_size(), plan.presplit, narrow,
                    one_column)
    if floor and config_space.split_k(cfg) > 1:
        whole = config_space.variant(cfg, SPLIT_K=1)
        if cost_model.within(whole, floor(2), facts.arch, plan.path, M, N, K, Z, facts.num_sms, facts.hbm_bytes_per_s,
                             plan.operand_bytes, plan.out.element_size()):
            return whole  # split-K's second launch would cost more host time than it saves
    return cfg


def ieee_transposed(N, K, can_split: bool = True) -> triton.Config:
    """The default config of an IEEE float32 x @ W.T run as its transpose (rules.transposed), N its columns (x's
    rows): config_space.IEEE_TRANSPOSED's tile for N, in its slices of K, halved until each keeps
    splits.MIN_SPLIT_STEPS K steps (whole where the plan cannot split)."""
    table = config_space.IEEE_TRANSPOSED
    _, tile, split = next((row for row in table if N <= row[0]), table[-1])
    while split > 1 and (not can_split or config_space.cdiv(K, tile[2]) // split < splits.MIN_SPLIT_STEPS):
        split //= 2
    return config_space.make_config(*tile, SPLIT_K=split)


def few_tiles_split(M, N, K, num_sms, can_split: bool = True) -> triton.Config:
    """The default config of a product of few tiles on the TMA kernel (rules.few_tiles_tma): the first tile of
    config_space.FEW_TILES_TMA whose tiles reach its fewest, in the most slices of K (a power of two up to
    splits.MAX_SPLIT_K) whose units fit in one wave of the SMs, each slice keeping splits.MIN_SPLIT_STEPS K steps
    (whole where the plan cannot split; design.md: few-tiles-tma)."""
    tile = next(t for least, t in config_space.FEW_TILES_TMA if cdiv(M, t[0]) * cdiv(N, t[1]) >= least)
    tiles, steps, split = cdiv(M, tile[0]) * cdiv(N, tile[1]), cdiv(K, tile[2]), 1
    while can_split and 2 * split <= splits.MAX_SPLIT_K and 2 * split * tiles <= num_sms and \
            steps // (2 * split) >= splits.MIN_SPLIT_STEPS:
        split *= 2
    return config_space.make_config(*tile, SPLIT_K=split)


def one_row(M, N, Z, num_sms, k_contiguous: bool):
    """The default config for a product of one row of C per batch entry, B contiguous along K:
    the one-row kernel when its programs (BLOCK_N columns each) cover every SM; None otherwise (few
    columns and long K, which the tensor-core tiles split over K; or B contiguous along N)."""
    if M != 1 or not k_contiguous:
        return None
    cfg = config_space.gemv_space()[0]
    return cfg if Z * config_space.cdiv(N, cfg.kwargs["BLOCK_N"]) >= num_sms else None


# Short K on the TMA kernel (design.md: short-k-pairs): a tile of few K steps spends as long in its prologue (the
# first loads from HBM) and its epilogue (C's store) as in its main loop, which one persistent program an SM leaves
# unhidden. Two programs an SM overlap one's with the other's main loop: 128x128x64 tiles in 3 stages, 113 KiB of
# shared memory each, so that two fit in an SM's 228 KiB. It takes the place of the defaults that trade a tile's
# rate for fuller waves (tiles of fewer than 128 rows or columns, wave-tail splits), which it beat on all but a few
# such products measured; against whole tiles of 128x128 or more it won and lost alike.
PAIRED = config_space.make_config(128, 128, 64, 3, 4, PER_SM=2)


# The fewest rows and columns PAIRED takes: two of its tiles each way, so that a clipped last tile wastes at most
# a third of its work (measured from 376 rows and 576 columns: design.md: short-k-pairs).
PAIR_MIN_SIDE = 256


def paired(plan) -> list:
    """[PAIRED] where it serves a planned product, else []: 16-bit on the TMA kernel, C stored through its descriptor,
    K at most the device's pair_max_k (a batch's: pair_batched_max_k), M and N at least PAIR_MIN_SIDE, a wave or more
    of its tiles (a batch's entries' together), kept by prune, and two of its programs within an SM's shared memory."""
    M, N, K, Z, th, facts = hint(plan.M), hint(plan.N), hint(plan.K), hint(plan.Z), plan.th, plan.facts
    max_k = th.pair_batched_max_k if plan.batched else th.pair_max_k
    if plan.path != "tma" or not plan.constants["C_DESC"] or K > max_k or \
            config_space.family(plan.dtype, plan.precision, plan.presplit) != "16bit" or \
            min(M, N) < PAIR_MIN_SIDE or Z * config_space.cdiv(M, 128) * config_space.cdiv(N, 128) < facts.num_sms:
        return []
    need = config_space.smem_bytes(PAIRED, plan.operand_bytes, True, plan.constants["BIAS"] == "matrix",
                                   plan.out.element_size())
    return plan.prune([PAIRED])[0] if 2 * need <= facts.smem_per_sm else []


# The widest N one-column-tile gives one column tile: the pointer kernel's 64x128 tiles, as measured (design.md:
# one-column-tile).
ONE_COLUMN_MAX_N = 128


# 16-bit products of fewer rows than the cost model ranks (cost_model.MIN_ROWS) stream their weight: tiles
# that reach this share of the SMs already keep HBM busy, and the largest such tile beats more, smaller ones
# and split-K's second pass (design.md: few-row-default).
FEW_ROWS_FILL = 0.5


def heuristic(M, N, K, dtype, precision, num_sms, elem_bytes, smem_limit, tma, matrix_bias=False,
              can_split=False, out_bytes=None, split_operands=False, narrow=(False, False),
              one_column_fill=float("inf")) -> triton.Config:
    """The default config of a product of M x N x K on a device of num_sms SMs and smem_limit bytes of shared
    memory a block, where cost_model.py does not rank them: among the family's configs that fit, the largest
    tile that still gives every SM a tile (on the pointer kernel, at most POINTER_MAX_TILE elements; on the TMA
    kernel, a short tile for products of few rows), split over K where the tiles cannot fill the SMs and
    ``can_split``. 16-bit products of 2 to cost_model.MIN_ROWS - 1 rows need tiles for FEW_ROWS_FILL of the SMs
    only, take the narrow tile where it reaches that share whole, on the pointer kernel the TMA-only tile, and tiles
    past POINTER_MAX_TILE where they fit in one wave, and split K only below that share (design.md:
    few-row-default). ``narrow``: whether the pointer kernel reads A's, B's rows less than 16 bytes at a time;
    where A's are, 64-row tiles, and 64 columns where B's are too (design.md: narrow-read-tiles). On the pointer
    kernel, tiles as wide as N where theirs reach ``one_column_fill`` of the tiles wanted (_unpaired says for which
    products; design.md: one-column-tile; infinite: never)."""
    family = config_space.family(dtype, precision, split_operands)
    space_ = [c for c in config_space.configs(dtype, precision, split_operands) if not config_space.tuned_tma_only(c)]
    few = family == "16bit" and 1 < M < cost_model.MIN_ROWS  # as measured: bf16 and fp16 draws of 2-127 rows
    wanted = FEW_ROWS_FILL * num_sms if few else num_sms  # tiles that count as enough

    def tiles(c):
        return config_space.cdiv(M, c.kwargs["BLOCK_M"]) * config_space.cdiv(N, c.kwargs["BLOCK_N"])

    # The narrow tile where it reaches that share whole and K fills its K step (all the draws had K of 768 or more).
    extra = [c for c in config_space.narrow(family, M, N, num_sms)
             if few and tiles(c) >= wanted and K >= c.kwargs["BLOCK_K"]]
    short = config_space.short(family, M) if tma else []
    if short:  # products of few rows: short tiles alone (design.md: short-tiles)
        space_, extra = short, []
    kept, _ = config_space.prune(space_, M, N, K, elem_bytes, smem_limit, tma, matrix_bias, out_bytes)
    if extra:  # pruned apart, as Product.candidates does: a narrow tile must not make prune() drop wider ones
        kept += config_space.prune(extra, M, N, K, elem_bytes, smem_limit, tma, matrix_bias, out_bytes)[0]

    def pointer_tile(c):  # the pointer kernel's cap, which binds few rows only where tiles fit in one wave
        # num_sms is a batch entry's share of the SMs (for_product); at 1 the batch alone may exceed a wave
        if few and 1 < num_sms and tiles(c) <= num_sms:
            return True
        return c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= config_space.POINTER_MAX_TILE and \
            (few or not config_space.tma_only(c))

    kept = [c for c in kept if tma or pointer_tile(c)] or kept
    if narrow[0]:
        kept = [c for c in kept if c.kwargs["BLOCK_M"] == 64 and (not narrow[1] or c.kwargs["BLOCK_N"] == 64)] or kept
    kept = kept or space_[-1:]

    def score(c):
        return (min(tiles(c), wanted), c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_warps)

    # On the pointer kernel each column tile reads all of A's rows it covers: where one column tile holds every
    # column and its tiles reach one_column_fill of those wanted, two would read A twice for fuller waves
    # (design.md: one-column-tile).
    whole = [c for c in kept if c.kwargs["BLOCK_N"] >= N]
    if not tma and whole and max(min(tiles(c), wanted) for c in whole) >= one_column_fill * wanted:
        kept = whole

    best = max(kept, key=score)
    split = splits.split_of(best, M, N, K, num_sms) if can_split and tiles(best) < wanted else 1
    return best if split == 1 else config_space.variant(best, SPLIT_K=split)
