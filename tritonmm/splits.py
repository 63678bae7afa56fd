"""How a product's work is split beyond its tiles: split-K's slices of K on the pointer kernel (split_for,
with_split_k) and the TMA kernel (tma_split_for, with_tma_split), and the wave-tail's second launch (tail_rows,
tail_config, tail_launch, with_tail). Each builds variants of config_space's configs; the tuner times them, the
default takes split_of where tiles cannot fill the SMs (design.md: Splitting the work)."""
import triton

from .config_space import cdiv, make_config, variant


# Split-K: a product with fewer tiles than SMs leaves SMs idle, and decode products are bound by how much of the
# weight is in flight. Slices of K give every SM a program; each keeps at least MIN_SPLIT_STEPS K steps for the
# pipeline to overlap, and at most MAX_SPLIT_K slices bound the fp32 workspace and the second pass.
# design.md: split-k.
MAX_SPLIT_K = 16
MIN_SPLIT_STEPS = 4


def split_for(tiles: int, k_steps: int, num_sms: int) -> int:
    """The fewest slices of K (a power of two) that give every SM a program; 1 when the tiles
    already do, or when K is too short to split."""
    split = 1
    while tiles * split < num_sms and split < MAX_SPLIT_K and k_steps // (2 * split) >= MIN_SPLIT_STEPS:
        split *= 2
    return split


def split_of(cfg: triton.Config, M, N, K, num_sms) -> int:
    """split_for with cfg's tile: its tiles over (M, N) and its K steps."""
    k = cfg.kwargs
    return split_for(cdiv(M, k["BLOCK_M"]) * cdiv(N, k["BLOCK_N"]), cdiv(K, k["BLOCK_K"]),
                     num_sms)


def with_split_k(cfgs, M, N, K, num_sms) -> list:
    """cfgs, each followed by its split-K variants where they apply: split_for's count and twice
    that (a decode product is bound by bytes in flight, which more slices raise)."""
    out = []
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        k_steps = cdiv(K, k["BLOCK_K"])
        split = split_of(c, M, N, K, num_sms)
        if split > 1:
            for s in (split, 2 * split):
                if s <= MAX_SPLIT_K and k_steps // s >= MIN_SPLIT_STEPS:
                    out.append(variant(c, SPLIT_K=s))
    return out


# Split-K on the TMA kernel (kernels/gemm_tma.py): where a config's tiles leave most SMs idle in their last wave
# and K is long, each tile runs as SPLIT_K slices of K, slice-major. The fp32 workspace costs its bytes twice, so it
# pays only where the K steps it saves outweigh that traffic (cost_model.tma_split_pays; design.md: tma-split-k).
TMA_SPLIT_MAX_WORKSPACE = 0.1  # without a cost model: the workspace's bytes, at most this fraction of A's and B's
TMA_SPLIT_MIN_FILL = 0.9  # the fewest slices whose units fill at least this much of their waves
TMA_SPLIT_MIN_STEPS = 16  # K steps a slice, at least: a unit's fp32 store must be short beside its K loop


def tma_slices(K: int, BLOCK_K: int, most: int) -> list:
    """The slice counts 1 to ``most`` of a TMA tile whose every slice keeps TMA_SPLIT_MIN_STEPS K steps (1: whole,
    always)."""
    return [split for split in range(1, most + 1) if split == 1 or cdiv(K, BLOCK_K) // split >= TMA_SPLIT_MIN_STEPS]


def wave_fill(units: int, num_sms: int) -> float:
    """How full the waves of ``units`` programs are on num_sms SMs."""
    return units / (num_sms * cdiv(units, num_sms))


def tma_split_for(M, N, K, BLOCK_M, BLOCK_N, BLOCK_K, elem_bytes, num_sms, pays=None) -> int:
    """Slices of K for a TMA tile of BLOCK_M x BLOCK_N: the fewest (2 to MAX_SPLIT_K) whose units fill
    TMA_SPLIT_MIN_FILL of their waves, where the whole tiles fill less, and each slice keeps TMA_SPLIT_MIN_STEPS
    K steps; else 1. The workspace must pay for itself: pays(split) where the device has a cost model
    (cost_model.tma_split_pays), else it stays within TMA_SPLIT_MAX_WORKSPACE of the operands."""
    tiles = cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)
    if wave_fill(tiles, num_sms) >= TMA_SPLIT_MIN_FILL:
        return 1
    operands = (M + N) * K * elem_bytes
    for split in range(2, MAX_SPLIT_K + 1):
        if cdiv(K, BLOCK_K) // split < TMA_SPLIT_MIN_STEPS:
            return 1
        if wave_fill(tiles * split, num_sms) >= TMA_SPLIT_MIN_FILL:
            paid = pays(split) if pays is not None else None
            if paid is None:
                paid = split * M * N * 4 <= TMA_SPLIT_MAX_WORKSPACE * operands
            return split if paid else 1
    return 1


def with_tma_split(cfgs, M, N, K, elem_bytes, num_sms, pays=None) -> list:
    """cfgs, the first config of each tile shape followed by its split-K variant where tma_split_for splits;
    pays(config, split): whether that split pays for its workspace (tma_split_for)."""
    out, seen = [], set()
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        shape = (k["BLOCK_M"], k["BLOCK_N"])
        if shape in seen:
            continue
        seen.add(shape)
        split = tma_split_for(M, N, K, *shape, k["BLOCK_K"], elem_bytes, num_sms,
                              None if pays is None else (lambda s, c=c: pays(c, s)))
        if split > 1:
            out.append(variant(c, SPLIT_K=split))
    return out


# One-wave slices (TMA path, the default config's cost model): a tile of at least ONE_WAVE_MIN_TILE rows and columns
# in 2 to ONE_WAVE_MAX_SPLIT slices of K, where its units fit in one wave of the SMs. Against smaller tiles whole, the
# same count of programs each does as many multiply-adds but reads fewer bytes for them; 64-row and 128x64 tiles in
# slices, and more slices, lost where they were measured (design.md: one-wave-split).
ONE_WAVE_MIN_TILE = 128
ONE_WAVE_MAX_SPLIT = 3


def one_wave_splits(cfgs, M, N, K, num_sms) -> list:
    """The split-K variants one_wave_split ranks: each whole config of cfgs of at least ONE_WAVE_MIN_TILE x
    ONE_WAVE_MIN_TILE in 2 to ONE_WAVE_MAX_SPLIT slices whose units (tiles x slices) fit in one wave of num_sms,
    each slice keeping TMA_SPLIT_MIN_STEPS K steps."""
    out = []
    for c in cfgs:
        k = c.kwargs
        if k.get("SPLIT_K", 1) != 1 or k.get("TAIL", 0) or min(k["BLOCK_M"], k["BLOCK_N"]) < ONE_WAVE_MIN_TILE:
            continue
        tiles = cdiv(M, k["BLOCK_M"]) * cdiv(N, k["BLOCK_N"])
        out += [variant(c, SPLIT_K=split)
                for split in tma_slices(K, k["BLOCK_K"], ONE_WAVE_MAX_SPLIT)[1:] if tiles * split <= num_sms]
    return out


# Wave-tail split (TMA path, 16-bit): the persistent kernel runs cdiv(tiles, SMs) rounds of tiles, so a last wave
# holding few tiles costs a whole round. With TAIL, the rows whose tiles fill whole waves run on the config's tiles
# and the rest in a second launch of small tiles over every SM: a tuner variant only where the last wave holds at
# most TAIL_MAX_FILL of the SMs (design.md: wave-tail-split).
TAIL_MAX_FILL = 0.5


def tail_rows(M, N, BLOCK_M, BLOCK_N, num_sms) -> int:
    """Rows [0, tail_rows) whose tiles fill whole waves of num_sms programs; 0 where the last wave is
    more than TAIL_MAX_FILL full, or there is no whole wave."""
    per_row = cdiv(N, BLOCK_N)
    waves, left = divmod(cdiv(M, BLOCK_M) * per_row, num_sms)
    if not waves or not left or left > TAIL_MAX_FILL * num_sms:
        return 0
    rows = waves * num_sms // per_row * BLOCK_M
    return rows if 0 < rows < M else 0


def tail_config(rows, N, num_sms) -> triton.Config:
    """The tile of a wave-tail launch over ``rows`` rows: 64x128 where those tiles fill half the SMs,
    else 64x64 (the better of the two in each of the three measured tails; design.md: wave-tail-split)."""
    wide = cdiv(rows, 64) * cdiv(N, 128) >= num_sms // 2
    return make_config(64, 128, 64, 4, 4) if wide else make_config(64, 64, 128, 4, 4)


# Where K is long, a wave tail's rows run on TAIL_SLICE_TILE in slices of K instead: tail_config's tiles leave most SMs
# idle for the whole of K (3072x768x13712 TN: 48 tiles of 64x64 on 132 SMs, 37 us for an eleventh of the work), and the
# units of a few slices fill them; a tail of few rows, on TAIL_SLICE_NARROW, whose rows a 128-row tile would leave
# mostly empty. At most TAIL_MAX_SLICES: eleven ran slower than five where they were measured, and the fresh-draw
# checks ran four (design.md: tail-slices).
TAIL_SLICE_TILE = make_config(128, 128, 64, 5, 4)
TAIL_SLICE_NARROW = make_config(64, 128, 64, 4, 4)
TAIL_MAX_SLICES = 4


def tail_launch(rows, N, K, num_sms, min_k, narrow_rows=64) -> tuple:
    """(config, slices of K) of a wave tail's launch over ``rows`` rows: TAIL_SLICE_TILE (TAIL_SLICE_NARROW for at most
    narrow_rows rows) in the most slices, up to TAIL_MAX_SLICES, whose units fit one wave of num_sms and keep
    TMA_SPLIT_MIN_STEPS K steps each, where K is at least min_k and two fit; else tail_config's tile whole (1)."""
    tile = TAIL_SLICE_NARROW if rows <= narrow_rows else TAIL_SLICE_TILE
    k = tile.kwargs
    most = min(TAIL_MAX_SLICES, num_sms // (cdiv(rows, k["BLOCK_M"]) * cdiv(N, k["BLOCK_N"])))
    split = tma_slices(K, k["BLOCK_K"], most)[-1] if K >= min_k and most > 1 else 1
    return (tile, split) if split > 1 else (tail_config(rows, N, num_sms), 1)


def with_tail(cfgs, M, N, num_sms) -> list:
    """cfgs, the first config of each tile shape of 128 rows or more followed by its TAIL variant
    where tail_rows splits the product."""
    out, seen = [], set()
    for c in cfgs:
        out.append(c)
        k = c.kwargs
        shape = (k["BLOCK_M"], k["BLOCK_N"])
        if shape not in seen and k["BLOCK_M"] >= 128 and tail_rows(M, N, *shape, num_sms):
            seen.add(shape)
            out.append(variant(c, TAIL=1))
    return out
