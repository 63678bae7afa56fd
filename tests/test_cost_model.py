"""The default config's cost model (tritonmm/cost_model.py) and the narrow-read rule of default_config.py:
what the model predicts from its rates, where it applies, and that the planner's default follows it."""
import pytest
import torch

from tritonmm import config_space, cost_model, device, thresholds
from tritonmm.precision import resolve_precision
from tritonmm.product import Product

H100_SMS = 132
WIDE, SQUARE, NARROW_WIDE = (config_space.make_config(128, 256, 64, 4, 8), config_space.make_config(128, 128, 64, 5, 4),
                             config_space.make_config(64, 256, 64, 4, 4))


def test_waves_decide_between_tiles():
    """1648^3 fills 1.03 waves of 128x256 tiles and 1.56 of 128x128 ones: the model takes the wide tile (measured
    18.9 against 23.9 us); at 4096^3 both fill their waves and the wide tile's rate wins too."""
    for n in (1648, 4096):
        assert cost_model.pick([SQUARE, WIDE], "sm90", "tma", n, n, n, 1, H100_SMS) is WIDE


H100_HBM = 2 * 2619e6 * 5120 / 8  # what torch reports for the H100 80GB HBM3 (device.hbm_bytes_per_s)


def test_short_k_is_store_bound():
    """With the device's bandwidth, a tile takes at least its store of C: for 32x(3968x3968x128) the model stops
    predicting 64x128 tiles fastest (measured 493 us against 392 on 128x256) and picks a 128x256 tile; its
    prediction sits near that measurement. Long K is left to the rates: 4096^3 predicts the same either way."""
    small = config_space.make_config(64, 128, 128, 4, 4)
    assert cost_model.pick([small, WIDE], "sm90", "tma", 3968, 3968, 128, 32, H100_SMS) is small  # rates alone
    assert cost_model.pick([small, WIDE], "sm90", "tma", 3968, 3968, 128, 32, H100_SMS, H100_HBM) is WIDE
    assert cost_model.time_us(WIDE, "sm90", "tma", 3968, 3968, 128, 32, H100_SMS, H100_HBM) == pytest.approx(392, rel=0.1)
    assert cost_model.time_us(small, "sm90", "tma", 3968, 3968, 128, 32, H100_SMS, H100_HBM) == pytest.approx(493, rel=0.1)
    for cfg in (small, WIDE, SQUARE):
        assert cost_model.time_us(cfg, "sm90", "tma", 4096, 4096, 4096, 1, H100_SMS, H100_HBM) == \
            cost_model.time_us(cfg, "sm90", "tma", 4096, 4096, 4096, 1, H100_SMS)
    # fp32 out stores twice the bytes: longer where the store sets the time
    assert cost_model.time_us(WIDE, "sm90", "tma", 3968, 3968, 128, 32, H100_SMS, H100_HBM, out_bytes=4) > \
        1.8 * cost_model.time_us(WIDE, "sm90", "tma", 3968, 3968, 128, 32, H100_SMS, H100_HBM)


def test_time_grows_with_work_and_counts_waves():
    t = [cost_model.time_us(WIDE, "sm90", "tma", 1024, 4096, k, 1, H100_SMS) for k in (1024, 2048, 4096)]
    assert t[0] < t[1] < t[2]
    # 132 tiles are one wave, 133 two: the 133rd tile costs a whole wave
    one = cost_model.time_us(WIDE, "sm90", "tma", 128 * 132, 256, 4096, 1, H100_SMS)
    two = cost_model.time_us(WIDE, "sm90", "tma", 128 * 133, 256, 4096, 1, H100_SMS)
    assert two == pytest.approx(2 * one)


def test_pointer_kernel_is_slower_per_tile_than_tma():
    for cfg in (WIDE, SQUARE, NARROW_WIDE):
        assert cost_model.time_us(cfg, "sm90", "pointer", 4096, 4096, 4096, 1, H100_SMS) > \
            cost_model.time_us(cfg, "sm90", "tma", 4096, 4096, 4096, 1, H100_SMS)


def test_tail_variants_are_priced_and_split_ones_are_not():
    tail = config_space.make_config(128, 256, 64, 4, 8, TAIL=1)
    # 2196^3: 162 tiles of 128x256, 30 in a second wave: the tail's small tiles beat a whole second wave
    assert config_space.tail_rows(2196, 2196, 128, 256, H100_SMS)
    assert cost_model.time_us(tail, "sm90", "tma", 2196, 2196, 2196, 1, H100_SMS) < \
        cost_model.time_us(WIDE, "sm90", "tma", 2196, 2196, 2196, 1, H100_SMS)
    split = config_space.make_config(128, 128, 64, 5, 4, SPLIT_K=2)  # not modeled: never the model's pick
    assert cost_model.time_us(split, "sm90", "tma", 256, 256, 8192, 1, H100_SMS) is None
    assert cost_model.pick([split, SQUARE], "sm90", "pointer", 848, 848, 848, 1, H100_SMS) is SQUARE


def test_unmeasured_configs_and_arches_are_not_ranked():
    odd = config_space.make_config(32, 32, 32, 2, 2)
    assert cost_model.time_us(odd, "sm90", "tma", 4096, 4096, 4096, 1, H100_SMS) is None
    assert cost_model.pick([odd], "sm90", "tma", 4096, 4096, 4096, 1, H100_SMS) is None
    assert not cost_model.covers("default", "16bit", 4096, 4096, 1, H100_SMS, False)


@pytest.mark.parametrize("M,N,Z,narrow,covered", [
    (4096, 4096, 1, False, True), (64, 14336, 1, False, False), (127, 8192, 1, False, False),
    (128, 512, 1, False, False), (512, 512, 8, False, True), (4096, 4096, 1, True, False)])
def test_model_covers_compute_bound_products_only(M, N, Z, narrow, covered):
    assert cost_model.covers("sm90", "16bit", M, N, Z, H100_SMS, narrow) is covered
    assert not cost_model.covers("sm90", "tf32", M, N, Z, H100_SMS, narrow)


def test_planner_default_never_takes_the_tuners_tall_tile(monkeypatch):
    """The 256x128 tile is the tuner's alone (config_space.TUNED_TMA_ONLY): where the tuner times it (the TMA
    kernel, N = 272 leaving a 256-wide tile's last column mostly empty), the default is another."""
    for field in ("tma_min_macs", "few_tiles_per_sm", "tma_min_rows"):
        monkeypatch.setitem(thresholds.OVERRIDES, field, 0)
    a, b = torch.randn(1024, 64).bfloat16(), torch.randn(64, 272).bfloat16()
    plan = Product(a, b, torch.empty(1024, 272, dtype=torch.bfloat16), resolve_precision(torch.bfloat16, None))
    assert plan.path == "tma" and any(config_space.tuned_tma_only(c) for c in plan.candidates())
    assert not config_space.tuned_tma_only(plan.heuristic())


def test_planner_default_is_the_models_pick():
    """On the interpreter's stand-in Hopper (4 SMs), a covered bf16 product's default config is the model's
    pick among the tuner's own candidates."""
    facts = device.facts(torch.device("cpu"))
    a, b = torch.randn(256, 192).bfloat16(), torch.randn(192, 320).bfloat16()
    plan = Product(a, b, torch.empty(256, 320, dtype=torch.bfloat16), resolve_precision(torch.bfloat16, None))
    assert cost_model.covers(facts.arch, "16bit", 256, 320, 1, facts.num_sms, False)
    ranked = [c for c in plan.candidates() if not config_space.tuned_tma_only(c)]
    expected = cost_model.pick(ranked, facts.arch, plan.path, 256, 320, 192, 1, facts.num_sms)
    assert expected is not None and plan.heuristic() == expected


@pytest.mark.parametrize("K,N,block_n", [(191, 320, 64), (191, 328, None)])
def test_narrow_reads_get_64_row_tiles(K, N, block_n):
    """A pointer product whose A rows are read one element at a time (K odd) defaults to 64-row tiles, and to
    64-column ones where B's rows are narrow too (N odd) (design.md:
    narrow-read-tiles); the product is computed right under that config."""
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    a, b = torch.randn(256, K, device=dev).bfloat16(), torch.randn(K, N - 1 if block_n else N, device=dev).bfloat16()
    out = torch.empty(256, b.shape[1], dtype=torch.bfloat16, device=dev)
    plan = Product(a, b, out, resolve_precision(torch.bfloat16, None))
    assert plan.path == "pointer" and not plan.staged
    cfg = plan.heuristic()
    assert cfg.kwargs["BLOCK_M"] == 64
    if block_n:
        assert cfg.kwargs["BLOCK_N"] == 64
    out.fill_(float("nan"))
    plan.run(cfg)
    ref = a.double() @ b.double()
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-2


def test_rates_are_the_fit_of_their_measurement():
    """cost_model's tables are what `python -m bench.regret --fit` makes of the draw they cite, to the digits
    printed: a constant cannot drift from its data."""
    from pathlib import Path

    from bench import regret
    data = Path(__file__).parent.parent / "bench" / "results" / "regret" / "regret_bf16_seed110.json"
    tables = regret.fit(regret._rows([data]))
    assert set(tables["RATES"]["sm90"]) == set(cost_model.RATES["sm90"])
    for key, (rate, tile) in tables["RATES"]["sm90"].items():
        assert cost_model.RATES["sm90"][key] == (pytest.approx(rate, abs=6e-4), pytest.approx(tile, abs=6e-3)), key
    assert cost_model.POINTER["sm90"] == pytest.approx(tables["POINTER"]["sm90"], abs=6e-3)
    assert cost_model.TAIL_COST["sm90"] == pytest.approx(tables["TAIL_COST"]["sm90"], abs=6e-3)


def test_few_row_default_is_the_one_its_draws_timed():
    """The rule-based default of products of fewer than cost_model.MIN_ROWS rows is, on every product of the two
    draws design.md's few-row-default cites as timed with it (runs stopped by their time limit), the
    config those draws recorded as the default: the rule cannot drift from its measurement. The stored times put
    it at most 1.04x the best on each draw."""
    import json
    import statistics
    from pathlib import Path

    from bench import regret
    from tritonmm import default_config
    folder = Path(__file__).parent.parent / "bench" / "results" / "regret"
    for name in ("regret_bf16_seed1408_rows2-127.json", "regret_fp16_seed1409_rows2-127.json"):
        rows = regret._rows([folder / name])
        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[json.loads((folder / name).read_text())["dtype"]]
        assert len(rows) >= 12 and all(1 < r["M"] < cost_model.MIN_ROWS for r in rows)
        ratios = []
        for r in rows:
            tma, Z = r["path"].startswith("tma"), r["entry_Z"]
            cfg = default_config.heuristic(r["M"], r["N"], r["K"], dtype, "native", max(1, r["num_sms"] // Z),
                                           2, 232448, tma, can_split=not tma and Z == 1, out_bytes=2)
            assert config_space.as_list(cfg) == r["default"], (name, r["shape"])
            times = {tuple(c): ms for c, ms in r["times"]}
            ratios.append(times[tuple(r["default"])] / min(times.values()))
        assert statistics.geometric_mean(ratios) < 1.04, name


def test_few_row_draws_hold_few_rows_and_repeat_by_seed():
    from bench import regret
    shapes = regret.draw_rows(16, 7, 2, 127)
    assert shapes == regret.draw_rows(16, 7, 2, 127) != regret.draw_rows(16, 8, 2, 127)
    assert all(2 <= s.M <= 127 and s.layout == "NT" for s in shapes)
    assert [s.Z > 1 for s in shapes] == [i % 4 == 3 for i in range(16)]


@pytest.mark.parametrize("rows", ["0-5", "9-3", "a-b", "12"])
def test_few_row_draws_refuse_a_bad_range(rows, capsys):
    from bench import regret
    with pytest.raises(SystemExit) as err:
        regret.main(["--seed", "1", "--rows", rows])
    assert err.value.code == 2 and "--rows takes LO-HI" in capsys.readouterr().err
