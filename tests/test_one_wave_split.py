"""One-wave slices (design.md: one-wave-split): the default config of the cost model's products on the TMA kernel may
be a tile of 128x128 or more split over K where its units run in one wave. What the rule offers and prices, where it
keeps the whole tile, that its picks on the stored runs are the faster ones, and that such a default runs right."""
import json
import statistics
from pathlib import Path

import pytest
import torch
from test_cost_model import H200, _plan as _cost_model_plan

from tritonmm import config_space, cost_model, device, splits, thresholds

STREAM = Path(__file__).parent.parent / "bench" / "results" / "stream"
# bench.stream's every-tile runs of products of 96-384 rows (H200; Triton 3.8, and 3.6 for the last).
RUNS = ("stream_rows96-384_h200.json", "stream_rows80-224_fresh_h200.json", "stream_rows128-224_fresh_t36_h200.json")


def _plan(M, N, K, on="cpu"):
    """A captured plan of x @ W.T in bf16 (planned, not run, unless ``on`` is a GPU)."""
    return _cost_model_plan(M, N, K, captured=True, on=on)


def test_variants_are_large_tiles_in_few_slices_within_one_wave():
    cfgs = [config_space.make_config(*t, 4, 4) for t in ((128, 128, 64), (64, 128, 128), (128, 64, 64), (128, 256, 64))]
    cfgs.append(config_space.make_config(128, 128, 64, 4, 4, SPLIT_K=2))  # already split: not split again
    variants = splits.one_wave_splits(cfgs, 224, 3584, 18944, 132)
    got = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], config_space.split_k(c)) for c in variants}
    # 128x128: 56 tiles, 2 slices in a wave (3: 168 units, two); 128x256: 28 tiles, 2 and 3 slices
    assert got == {(128, 128, 2), (128, 256, 2), (128, 256, 3)}
    # each slice keeps TMA_SPLIT_MIN_STEPS K steps: K of 1983 holds 31 steps of 64, too few for two slices of 16
    assert not splits.one_wave_splits(cfgs, 224, 3584, 1983, 132)
    assert all(config_space.cdiv(18944, c.kwargs["BLOCK_K"]) // config_space.split_k(c) >= splits.TMA_SPLIT_MIN_STEPS
               for c in variants)


def test_price_is_one_wave_of_slices_plus_the_workspace():
    cfg = config_space.make_config(128, 128, 64, 6, 4, SPLIT_K=2)
    us = cost_model.one_wave_split_us(cfg, "sm90", 224, 3584, 18944, 132, H200.hbm_bytes_per_s)
    whole = cost_model.time_us(config_space.make_config(128, 128, 64, 6, 4), "sm90", "tma", 224, 3584, 9472, 1, 132)
    assert us > whole + cost_model.SPLIT_FIXED_US["sm90"]  # half of K's tile, plus the fixed cost and the workspace
    assert cost_model.one_wave_split_us(cfg, "sm90", 224, 8192, 18944, 132, H200.hbm_bytes_per_s) is None  # 2 waves
    wider = cost_model.one_wave_split_us(cfg, "sm90", 224, 4096, 18944, 132, H200.hbm_bytes_per_s)
    assert wider > us  # more columns: the same slice, more workspace


@pytest.fixture
def h200(monkeypatch):
    monkeypatch.setattr(device, "facts", lambda d: H200)


def test_the_default_splits_where_slices_fill_the_wave_of_smaller_whole_tiles(h200):
    cfg = _plan(224, 3584, 18944).heuristic()
    assert config_space.as_list(cfg)[:3] == [128, 128, 64] and config_space.split_k(cfg) == 2
    with thresholds.override(one_wave_split=False):
        assert config_space.split_k(_plan(224, 3584, 18944).heuristic()) == 1
    # Where slices would leave more SMs idle than the whole tiles (128 rows: 128 tiles of 64x64 against 96 units of
    # 128x128 in 3 slices, which lost), where the units take two waves (5120 columns), or where short K leaves
    # the workspace's cost beside a short K loop: whole.
    for M, N, K in ((128, 4096, 14336), (192, 5120, 13824), (224, 3584, 2560)):
        assert config_space.split_k(_plan(M, N, K).heuristic()) == 1, (M, N, K)
    # A split predicted faster than the whole tiles but under 26 us, the host time of a split call's two launches:
    # floored there, it stays whole; without that floor it splits.
    assert config_space.split_k(_plan(224, 2560, 5120).heuristic()) == 1
    with thresholds.override(host_us_per_call=0.0, host_us_per_launch=0.0):
        assert config_space.split_k(_plan(224, 2560, 5120).heuristic()) == 3


def test_its_picks_on_the_stored_runs_are_the_faster_ones(monkeypatch):
    """On every product of bench.stream's stored runs of 96-384 rows (every tile pinned, weights streamed from HBM)
    that the rule changes, its pick ran faster than the default without it, and by 7% in geomean: the rule cannot
    drift from the runs it was set on."""
    from bench.common import config_text
    gains = []
    for name in RUNS:
        data = json.loads((STREAM / name).read_text())
        facts = H200._replace(num_sms=data["num_sms"], hbm_bytes_per_s=data["hbm_bytes_per_s"])
        monkeypatch.setattr(device, "facts", lambda d: facts)
        for r in data["rows"]:
            plan = _plan(r["M"], r["N"], r["K"])
            if plan.path != "tma":
                continue
            on = config_text(plan.heuristic())
            with thresholds.override(one_wave_split=False):
                off = config_text(_plan(r["M"], r["N"], r["K"]).heuristic())
            if on != off:
                assert r["times"][on] < r["times"][off], (name, r["M"], r["N"], r["K"], on, off)
                gains.append(r["times"][off] / r["times"][on])
    assert len(gains) >= 10 and statistics.geometric_mean(gains) >= 1.07


def test_a_split_default_runs_right_against_float64(monkeypatch):
    """A one-wave split default (its slices, then the sum) against float64, out NaN-filled first, on the GPU where
    there is one, else in the interpreter: a device of 8 SMs and no host floor stand in, so that a product small
    enough for the interpreter splits (150 rows: the second row of tiles clipped by TMA)."""
    from conftest import rel_err
    monkeypatch.setattr(device, "facts", lambda d: H200._replace(num_sms=8))
    monkeypatch.setitem(thresholds.OVERRIDES, "host_us_per_call", 0.0)
    monkeypatch.setitem(thresholds.OVERRIDES, "host_us_per_launch", 0.0)
    plan = _plan(150, 248, 8192, on="cuda" if torch.cuda.is_available() else "cpu")
    cfg = plan.heuristic()
    assert plan.path == "tma" and config_space.as_list(cfg)[:2] == [128, 128] and config_space.split_k(cfg) == 2
    plan.run(cfg)
    a, b = plan.given
    assert rel_err(plan.out, a, b) < 1e-2, config_space.as_list(cfg)
