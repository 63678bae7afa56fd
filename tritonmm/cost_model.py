"""The default config's cost model: each candidate config's time, predicted from per-config rates measured
on the GPU, so that a new shape's first call runs close to what the tuner would pick while timing nothing
(design.md: default-config-model).

A config's tiles run in waves over the SMs (one block an SM: every 16-bit config takes over half of
Hopper's shared memory), so a product takes

    waves x (BM x BN x padded K x rate + tile cost)        (rate, tile cost: RATES)

per launch: the first term is the tile's multiply-adds at that config's measured rate, the second what a
tile costs besides (filling the pipeline, the epilogue). A tile takes at least its store of C: its bytes at
the share of HBM bandwidth one SM gets while all of them store, plus a fixed cost (HBM_EFFICIENCY,
STORE_TILE_US). Where K is short (below about 150 on 128 x 256 bf16 tiles) the store sets the time; without
it the rates alone, fitted where the multiply-adds set it, predicted 64 x 128 tiles at 245 us for
32x(3968x3968x128), which ran them in 493 against 392 on 128 x 256 (design.md: store-term). Wave
quantization is most of what the rates alone miss: 1648^3 fills 1.03 waves of 128x256 tiles and 1.56 of
128x128 ones (measured 18.9 against 23.9 us). A TAIL config runs its whole waves, then the leftover rows as a second launch of small tiles
(splits.tail_config): TAIL_COST times the two launches' tiles (a tail over long K runs in slices of K instead,
splits.tail_launch, which this prices as the whole tail: design.md tail-slices). Split-K configs are not ranked by time_us: where
64 x 64 tiles fill the SMs whole K slices mostly do too, and the one split the model picked on a fresh draw lost
(848^3: 128x128 in two slices 10.5 us, 64x128 whole 6.2; design.md: default-config-model). Only large tiles in a
few slices whose units run in one wave may replace the whole pick (one_wave_split; design.md: one-wave-split).

The rates are the TMA kernel's; the pointer kernel's are POINTER's multiples of them (alpha per
multiply-add, beta x the tile cost + gamma). The model ranks only products it was measured on: 16-bit,
at least 128 rows, enough 64 x 64 tiles to fill the SMs (where bandwidth, not waves, sets the time, the
rule-based default in default_config.py stays), rows the pointer kernel reads 16 bytes at a time.
"""
from . import config_space, splits
from .config_space import cdiv

# Products of 2 to STREAM_MAX_ROWS rows on the TMA kernel stream their weight once: one row of tiles (16 rows
# where they cover M, else 64), timed as HBM traffic (stream_us), never by RATES, where tiles of STREAM_WAVE_COLS
# columns cover N in one wave of the SMs: the products it was fitted and checked on. Wider weights (vocabulary
# heads) keep the few-row rule, fitted on draws that hold them (design.md: stream-model). The transpose of a product
# of 2 to STREAM_MAX_COLS rows (rules.transposed: its plan alone, not a caller's product of few columns) streams the
# weight as one column of tiles, the weight's rows as the tile's 64 or 128 rows (STREAM_TILES_T). At 33-64 rows the
# transpose ran level with the rows' tiles, at 2-32 ahead on 21 of 21 (design.md: stream-transpose).
STREAM_MAX_ROWS = 64
STREAM_MAX_COLS = 32
STREAM_WAVE_COLS = 128
# (BLOCK_N, BLOCK_K, num_stages) the stream model ranks at each tile height, whole or split over K: the deepest
# pipelines of the tiles its fit timed (H200, bf16, 2026-11-28; bench/results/stream/), kept where they fit (prune).
STREAM_TILES = {
    16: [(32, 128, 6), (32, 256, 4), (32, 256, 6), (64, 128, 6), (64, 128, 8), (64, 256, 5), (128, 128, 4),
         (128, 128, 6)],
    64: [(32, 128, 6), (32, 256, 4), (64, 128, 6), (128, 64, 6), (128, 128, 4), (256, 64, 4)],
}
# (BLOCK_M, BLOCK_K, num_stages) of a few-column product's tiles, BLOCK_N 16 or 32, the lesser that covers N: the
# transposed tiles timed on 17-48 row products (H200, bf16, 2026-11-29; design.md: stream-transpose).
STREAM_TILES_T = [(64, 256, 4), (128, 128, 4), (64, 128, 6), (128, 64, 6)]
# The latency that the loads in flight cover (Little's law: in flight / latency is the rate they sustain) and a
# split-K launch's fixed cost (its second pass, the workspace's allocation), fitted to every tile's time on 12
# decode products (design.md: stream-model).
STREAM_LATENCY_US = {"sm90": 2.5}
SPLIT_FIXED_US = {"sm90": 3.0}
# One-wave slices (one_wave_split) price their fp32 workspace at this many times its bytes' HBM time: set on the
# stored stream runs' every-tile times at 128-384 rows, where 1x priced slices that lost (design.md: one-wave-split).
SPLIT_WORKSPACE_COST = 2.0

# Per arch, the TMA kernel's (microseconds per million multiply-adds on one SM, microseconds per tile) by
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), as `python -m bench.regret --fit
# bench/results/regret/regret_bf16_seed110.json` prints them: least squares in relative error over every
# candidate's time on the 31 products of that bf16 draw the model covers (H100, 2026-11-27; design.md:
# default-config-model). The tuner's tall tile (config_space.TUNED_TMA_ONLY) is left to the tuner:
# Product.heuristic never ranks it.
RATES = {
    "sm90": {
        (128, 256, 64, 8, 8, 3): (0.335, 1.37),
        (128, 256, 64, 8, 8, 4): (0.333, 1.44),
        (128, 256, 64, 16, 8, 4): (0.334, 1.45),
        (64, 256, 64, 8, 4, 4): (0.397, 0.59),
        (128, 128, 64, 8, 4, 5): (0.374, 0.72),
        (128, 128, 64, 8, 4, 6): (0.371, 0.89),
        (64, 128, 64, 8, 4, 6): (0.526, 0.32),
        (64, 128, 128, 8, 4, 4): (0.502, 0.00),
        (128, 64, 64, 8, 4, 6): (0.576, 0.00),
        (64, 64, 128, 8, 4, 4): (0.714, 0.00),
    },
}
POINTER = {"sm90": (2.31, 0.86, 1.44)}  # alpha, beta, gamma (module docstring), fitted with RATES
# The store term (module docstring): the share of the device's HBM bandwidth (memory clock x bus width) a store
# stream reaches, and a tile's fixed cost besides its bytes; fitted to 32x(3968x3968x128) on 64x128 and 128x256
# tiles (1.06 and 3.24 us a tile; H100, 2026-11-27; design.md: store-term).
HBM_EFFICIENCY = {"sm90": 0.90}
STORE_TILE_US = {"sm90": 0.33}
TAIL_COST = {"sm90": 1.11}  # a TAIL config's two launches against their tiles' predicted time
# A TMA split-K variant is offered where the busiest SM's K loop shrinks by at least this many times the time its
# fp32 workspace takes through HBM, written by the slices and read by the sum (design.md: tma-split-k).
SPLIT_TRAFFIC_MARGIN = 2.0
MIN_ROWS = 128  # products of fewer rows stream the weight: bandwidth, not waves (module docstring)


def covers(arch: str, family: str, M: int, N: int, Z: int, num_sms: int, narrow_reads: bool) -> bool:
    """Whether the model ranks this product's configs (module docstring): a measured arch and family, at least
    MIN_ROWS rows, enough 64 x 64 tiles (Z entries' worth) to fill num_sms SMs, and 16-byte reads."""
    return arch in RATES and family == "16bit" and M >= MIN_ROWS and not narrow_reads and \
        cdiv(M, 64) * cdiv(N, 64) * Z >= num_sms


def _rate(arch: str, path: str, cfg_key: tuple):
    """(us per million MACs an SM, us per tile) of one config on one kernel path: its measured rate, else that
    of a measured config of the same tile (BLOCK_M, BLOCK_N, BLOCK_K; tail_config's 4-stage 64 x 128 x 64);
    None if there is none."""
    rate = RATES[arch].get(cfg_key) or next((r for k, r in RATES[arch].items() if k[:3] == cfg_key[:3]), None)
    if rate is None or path == "tma":
        return rate
    alpha, beta, gamma = POINTER[arch]
    return alpha * rate[0], beta * rate[1] + gamma


def _hbm_us(arch: str, nbytes: float, hbm_bytes_per_s: float) -> float:
    """Microseconds nbytes take at the share of the device's HBM bandwidth a stream reaches (HBM_EFFICIENCY)."""
    return nbytes / (hbm_bytes_per_s * HBM_EFFICIENCY[arch]) * 1e6


def time_us(cfg, arch: str, path: str, M: int, N: int, K: int, Z: int, num_sms: int, hbm_bytes_per_s=None,
            out_bytes: int = 2):
    """The predicted time of a product of Z x (M x N x K) under cfg on path ('tma' or 'pointer'), in
    microseconds; None for a split-K config, or where a config it launches was not measured. With the device's
    HBM bandwidth (DeviceFacts.hbm_bytes_per_s), a tile takes at least its store of C (out_bytes an element)."""
    bm, bn, bk, group, warps, stages, split, tail = config_space.as_list(cfg)[:8]
    rate = _rate(arch, path, (bm, bn, bk, group, warps, stages))
    if rate is None:
        return None
    store_us = 0.0
    if hbm_bytes_per_s:  # every SM storing at once gets 1/num_sms of the bandwidth
        store_us = _hbm_us(arch, bm * bn * out_bytes * num_sms, hbm_bytes_per_s) + STORE_TILE_US[arch]

    def launch_us(rows, k):  # the waves of one launch over rows of the product
        tiles = cdiv(rows, bm) * cdiv(N, bn) * Z
        return cdiv(tiles, num_sms) * max(bm * bn * cdiv(k, bk) * bk * 1e-6 * rate[0] + rate[1], store_us)

    if split > 1:  # not modeled (module docstring)
        return None
    rows = splits.tail_rows(M, N, bm, bn, num_sms) if tail else 0
    if not rows:
        return launch_us(M, K)
    rest = time_us(splits.tail_config(M - rows, N, num_sms), arch, path, M - rows, N, K, Z, num_sms,
                   hbm_bytes_per_s, out_bytes)
    return None if rest is None else (launch_us(rows, K) + rest) * TAIL_COST[arch]


def launches(cfg, M: int, N: int, num_sms: int) -> int:
    """Kernel launches of a product under cfg as this model times it: split-K's two passes, a wave-tail split's two
    launches (time_us), or one."""
    bm, bn, *_, split, tail = config_space.as_list(cfg)[:8]
    return 2 if split > 1 or (tail and splits.tail_rows(M, N, bm, bn, num_sms)) else 1


def floored(us: float, launches: int, host_us=None) -> tuple:
    """How a time ranks: by the larger of it and an eager call's host time with that many launches
    (host_us(launches)), then by it; host_us None: by it alone. Defaults rank predicted times so (design.md:
    default-host-floor), tuning.rank timed ones (host-floor), in whatever unit host_us gives."""
    return (us if host_us is None else max(us, host_us(launches)), us)


def pick(candidates, arch: str, path: str, M: int, N: int, K: int, Z: int, num_sms: int, hbm_bytes_per_s=None,
         out_bytes: int = 2, host_us=None):
    """The candidate of least predicted time (time_us), floored by host_us (floored), or None where the model
    predicts none of them."""
    timed = [(floored(t, launches(c, M, N, num_sms), host_us), i) for i, c in enumerate(candidates)
             if (t := time_us(c, arch, path, M, N, K, Z, num_sms, hbm_bytes_per_s, out_bytes)) is not None]
    return candidates[min(timed)[1]] if timed else None


def within(cfg, floor_us: float, arch: str, path: str, M: int, N: int, K: int, Z: int, num_sms: int,
           hbm_bytes_per_s, elem_bytes: int = 2, out_bytes: int = 2) -> bool:
    """Whether cfg, a config over whole K, is predicted to take at most floor_us: its time_us, and its operands read
    once at the bandwidth a stream reaches. False where the model cannot tell (another arch, a tile without a rate,
    the bandwidth unknown)."""
    if arch not in RATES or not hbm_bytes_per_s:
        return False
    us = time_us(cfg, arch, path, M, N, K, Z, num_sms, hbm_bytes_per_s, out_bytes)
    return us is not None and max(us, _hbm_us(arch, Z * (M + N) * K * elem_bytes, hbm_bytes_per_s)) <= floor_us


def one_wave_split_us(cfg, arch: str, M: int, N: int, K: int, num_sms: int, hbm_bytes_per_s: float) -> float | None:
    """The predicted time of a TMA split-K config whose units (tiles x slices) run in one wave of the SMs, in
    microseconds: a unit's slice of K at the config's measured rate plus its tile cost, SPLIT_FIXED_US, and the fp32
    workspace (written by the slices, read by the sum) at SPLIT_WORKSPACE_COST times its HBM time. None where the
    units take more than one wave or the tile's rate was not measured (design.md: one-wave-split)."""
    bm, bn, bk, group, warps, stages, split, _ = config_space.as_list(cfg)[:8]
    rate = _rate(arch, "tma", (bm, bn, bk, group, warps, stages))
    if rate is None or cdiv(M, bm) * cdiv(N, bn) * split > num_sms:
        return None
    unit_us = bm * bn * cdiv(cdiv(K, split), bk) * bk * 1e-6 * rate[0] + rate[1]
    return unit_us + SPLIT_FIXED_US[arch] + SPLIT_WORKSPACE_COST * _hbm_us(arch, 2 * split * M * N * 4, hbm_bytes_per_s)


def one_wave_split(whole, variants, arch: str, M: int, N: int, K: int, num_sms: int, hbm_bytes_per_s: float,
                   floor_us: float = 0.0, out_bytes: int = 2):
    """Among variants (splits.one_wave_splits), the one of least one_wave_split_us where it is below the whole
    config's time_us; else whole. A variant counts only where its units are at least as many as the whole config's
    tiles (up to a wave): the rates were fitted on products that fill the SMs, and slices that leave more SMs idle
    than the whole tiles lost (design.md: one-wave-split). floor_us: a split call's least time, the host time of an
    eager call's two launches (design.md: host-floor), asked of captured plans too, as it was set and replayed."""
    wb, wn = whole.kwargs["BLOCK_M"], whole.kwargs["BLOCK_N"]
    whole_us = time_us(whole, arch, "tma", M, N, K, 1, num_sms, hbm_bytes_per_s, out_bytes)
    if whole_us is None or not hbm_bytes_per_s:
        return whole
    least = min(cdiv(M, wb) * cdiv(N, wn), num_sms)
    best, best_us = whole, whole_us
    for c in variants:
        k = c.kwargs
        if cdiv(M, k["BLOCK_M"]) * cdiv(N, k["BLOCK_N"]) * k["SPLIT_K"] < least:
            continue
        us = one_wave_split_us(c, arch, M, N, K, num_sms, hbm_bytes_per_s)
        if us is not None and max(us, floor_us) < best_us:
            best, best_us = c, max(us, floor_us)
    return best


def tma_split_pays(cfg, split: int, arch: str, M: int, N: int, K: int, num_sms: int, hbm_bytes_per_s) -> bool | None:
    """Whether the TMA kernel's cfg in ``split`` slices of K saves more than SPLIT_TRAFFIC_MARGIN times its
    workspace's traffic: the busiest SM's K steps, whole tiles against slices, at the config's measured rate,
    against 2 x split x M x N fp32 bytes at the HBM bandwidth a stream reaches. None where the model has no rate
    for the tile or the bandwidth is not known (splits.tma_split_for then bounds the workspace by bytes)."""
    bm, bn, bk, group, warps, stages, *_ = config_space.as_list(cfg)
    rate = _rate(arch, "tma", (bm, bn, bk, group, warps, stages)) if arch in RATES else None
    if rate is None or not hbm_bytes_per_s:
        return None
    tiles, steps = cdiv(M, bm) * cdiv(N, bn), cdiv(K, bk)
    saved = cdiv(tiles, num_sms) * steps - cdiv(tiles * split, num_sms) * cdiv(steps, split)
    traffic_us = _hbm_us(arch, 2 * split * M * N * 4, hbm_bytes_per_s)
    return saved * bm * bn * bk * 1e-6 * rate[0] >= SPLIT_TRAFFIC_MARGIN * traffic_us


def stream_us(cfg, arch: str, M: int, N: int, K: int, num_sms: int, hbm_bytes_per_s: float,
              elem_bytes: int = 2) -> float:
    """The predicted time of a product of few rows (or a transposed one of few columns: stream_side) under cfg on
    the TMA kernel, in microseconds: its units (tiles x slices of K) run in waves over the SMs, each wave as long as
    a full one (a unit's SM keeps no more bytes in flight when others idle); a unit streams its weight bytes (its
    tile's BLOCK_N, of few columns BLOCK_M, by its slice of K) at the lesser of its share of the HBM rate a stream
    reaches (HBM_EFFICIENCY) among the units running at once, and the weight bytes it keeps in flight (num_stages x
    that side x BLOCK_K) over STREAM_LATENCY_US. A split adds SPLIT_FIXED_US and its fp32 workspace, written and
    read (design.md: stream-model)."""
    bm, bn, bk, _, _, stages, split, _ = config_space.as_list(cfg)[:8]
    wide = bm if _columns(M, N) else bn  # the weight's side of the tile
    rate = hbm_bytes_per_s * HBM_EFFICIENCY[arch] * 1e-6  # bytes a microsecond
    units, unit_bytes = cdiv(M, bm) * cdiv(N, bn) * split, wide * cdiv(K, split) * elem_bytes
    unit_rate = min(rate / min(units, num_sms), stages * wide * bk * elem_bytes / STREAM_LATENCY_US[arch])
    us = cdiv(units, num_sms) * unit_bytes / unit_rate
    return us + (SPLIT_FIXED_US[arch] + 2 * split * M * N * 4 / rate if split > 1 else 0.0)


def stream_candidates(M: int, N: int, K: int) -> list:
    """The stream model's tiles of a product of few rows, STREAM_TILES at the height that covers M in one row of
    tiles (16 rows, else 64); of a transposed one's few columns (stream_side), STREAM_TILES_T at the width that
    covers N in one column of tiles (16 columns, else 32); each whole and in every split over K that keeps
    splits.TMA_SPLIT_MIN_STEPS K steps a slice."""
    if _columns(M, N):
        bn = 16 if N <= 16 else 32
        tiles = [(bm, bn, bk, stages) for bm, bk, stages in STREAM_TILES_T]
    else:
        bm = 16 if M <= 16 else 64
        tiles = [(bm, bn, bk, stages) for bn, bk, stages in STREAM_TILES[bm]]
    return [config_space.make_config(bm, bn, bk, stages, 4, SPLIT_K=split) for bm, bn, bk, stages in tiles
            for split in splits.tma_slices(K, bk, splits.MAX_SPLIT_K)]


def _columns(M: int, N: int) -> bool:
    """Whether a product's shape is a transposed one's (stream_side's 'columns'): more than STREAM_MAX_ROWS rows,
    2 to STREAM_MAX_COLS columns."""
    return M > STREAM_MAX_ROWS and 2 <= N <= STREAM_MAX_COLS


def stream_side(M: int, N: int, num_sms: int, transposed: bool = False):
    """'rows' where a product is the stream model's of few rows: 2 to STREAM_MAX_ROWS rows, N covered by one wave of
    STREAM_WAVE_COLS-column tiles; where ``transposed`` (a few-row product's transpose: rules.transposed), 'columns'
    where that holds with rows and columns swapped, of 2 to STREAM_MAX_COLS columns; else None."""
    if transposed:
        return "columns" if _columns(M, N) and cdiv(M, STREAM_WAVE_COLS) <= num_sms else None
    return "rows" if 2 <= M <= STREAM_MAX_ROWS and cdiv(N, STREAM_WAVE_COLS) <= num_sms else None


def stream_class(M: int, N: int, num_sms: int, transposed: bool = False) -> bool:
    """Whether a product's shape is the stream model's (stream_side)."""
    return stream_side(M, N, num_sms, transposed) is not None


def streams(arch: str, family: str, M: int, N: int, Z: int, num_sms: int, path: str, hbm_bytes_per_s,
            transposed: bool = False) -> bool:
    """Whether stream_pick ranks this product: unbatched 16-bit of stream_class (``transposed``: a few-row product's
    transpose), on the TMA kernel, on a measured arch whose HBM bandwidth is known."""
    return arch in STREAM_LATENCY_US and family == "16bit" and stream_class(M, N, num_sms, transposed) and Z == 1 \
        and path == "tma" and bool(hbm_bytes_per_s)


def stream_pick(candidates, arch: str, M: int, N: int, K: int, num_sms: int, hbm_bytes_per_s: float,
                elem_bytes: int = 2, host_us=None):
    """The candidate of least stream_us, floored by host_us (floored), or None without candidates."""
    return min(candidates, key=lambda c: floored(stream_us(c, arch, M, N, K, num_sms, hbm_bytes_per_s, elem_bytes),
                                                 launches(c, M, N, num_sms), host_us), default=None)
