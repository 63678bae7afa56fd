"""The sweep's shape suite, its draw, its summary, and its run without a GPU."""
import math
import statistics

import pytest
from conftest import HAS_GPU
from test_bench import run_bench

from bench import report, sweep
from bench.sweep import Shape


def test_shapes_cover_every_group():
    shapes = sweep.SHAPES
    assert len(shapes) >= 40 and len(set(shapes)) == len(shapes)
    squares = {s.M for s in shapes if s.M == s.N == s.K}
    assert {256, 768, 1536, 3072, 6144, 8192} <= squares  # non-powers of two among them
    assert any(s.M == 1 for s in shapes) and any(s.M == 8192 and s.layout == "NT" for s in shapes)
    assert any(min(s[:3]) <= 64 and max(s[:3]) >= 8192 for s in shapes)  # thin and wide
    assert any(all(d % 8 for d in s[:3]) for s in shapes)  # no dimension 16-byte aligned in 16 bits
    assert any(s.K % 64 and not (s.M % 8 or s.N % 8 or s.K % 8) for s in shapes)  # aligned, but a partial K step
    assert {s.layout for s in shapes} == {"NN", "NT"}
    assert {s.kind for s in shapes} == {"square", "forward", "thin", "unaligned", "ragged-k"}


def test_size_classes():
    assert [sweep.size_class(n) for n in (1, 3, 6, 12, 40, 48, 96, 4096, 4000, 14336)] == [1, 1, 2, 4, 8, 16, 32, 128,
                                                                                           32, 128]
    assert sweep.class_name(1) == "odd" and sweep.class_name(64) == "64"
    assert sweep.shape_class(Shape(4096, 4097, 4096)) == 1 and sweep.shape_class(Shape(1024, 96, 64)) == 32
    for cls in sweep.CLASSES:  # _snap lands on the class asked for, near the size asked for
        for x in (1, 100, 777.7, 5000):
            v = sweep._snap(x, cls)
            assert sweep.size_class(v) == cls and abs(v - x) <= 2 * cls, (x, cls, v)


def test_draw_is_repeatable_and_new():
    shapes = sweep.draw(40, seed=3)
    assert shapes == sweep.draw(40, seed=3) and shapes != sweep.draw(40, seed=4)
    sizes = {(s.Z, *s[:3]) for s in shapes}
    assert len(sizes) == 40 and not sizes & {(s.Z, *s[:3]) for s in sweep.SHAPES}
    assert all(s.macs <= sweep.DRAW_MAX_MACS for s in shapes)
    assert len(sweep.draw(sweep.DRAW_MAX, seed=1)) == sweep.DRAW_MAX  # ends: each kind has room for its share
    with pytest.raises(ValueError, match="n must be"):
        sweep.draw(sweep.DRAW_MAX + 1, seed=1)


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_draw_covers_classes_kinds_layouts_and_models(seed):
    shapes = sweep.draw(40, seed)
    for start in range(0, 40, len(sweep.CLASSES)):  # every 8 shapes hold every class, whatever the seed
        assert {sweep.shape_class(s) for s in shapes[start:start + 8]} == set(sweep.CLASSES)
    assert [s.kind for s in shapes[:len(sweep.DRAW_KINDS)]] == list(sweep.DRAW_KINDS)
    assert {s.layout for s in shapes} == {"NN", "NT", "TN"} and any(s.Z > 1 for s in shapes)
    kinds = {kind: [s for s in shapes if s.kind == kind] for kind in sweep.DRAW_KINDS}
    assert all(s.M == s.N == s.K and 256 <= s.M <= 8192 + 128 for s in kinds["square"])
    weights = set(sweep.MODEL_WEIGHTS)
    assert all((s.N, s.K) in weights and s.layout == "NT" and 1 <= s.M <= 16384 + 128 for s in kinds["forward"])
    assert all((s.K, s.N) in weights if s.layout == "NN" else (s.M, s.N) in weights and s.layout == "TN"
               for s in kinds["backward"])
    assert all(s.Z > 1 for s in kinds["batched"])


def test_draw_samples_uniformly_and_log_uniformly():
    # forward products' M over 1-16384: log-uniform draws put many below 64 (decode), uniform ones many
    # above 4096; a draw of either alone would miss one side
    ms = [s.M for s in sweep.draw(sweep.DRAW_MAX, seed=2) if s.kind == "forward"]
    assert sum(m <= 64 for m in ms) >= 0.15 * len(ms) and sum(m >= 4096 for m in ms) >= 0.25 * len(ms)
    assert any(w in {(s.N, s.K) for s in sweep.draw(sweep.DRAW_MAX, seed=2)} for w in ((4096, 4096), (1024, 4096)))


def test_draw_goes_with_the_sweep_or_first_call_only():
    out = run_bench("--draw", "4", "--preset", "square")
    assert out.returncode == 2 and "--draw draws the sweep's shapes" in out.stderr
    out = run_bench("--draw", "999", "--preset", "sweep")
    assert out.returncode == 2 and "--draw takes 1-" in out.stderr


def test_fp8_shapes_leave_batched_products_out():
    shapes = [Shape(64, 128, 256, "TN", kind="random"), Shape(64, 128, 256, "NN"), Shape(32, 64, 128, "NT", 8)]
    assert sweep.shapes_for("fp8", shapes) == [Shape(64, 128, 256, "NT", kind="random")]
    assert sweep.shapes_for("bf16", shapes) == shapes
    assert sweep.shapes_for("bf16", [(1, 2, 3, "NN")]) == [Shape(1, 2, 3, "NN")]  # plain tuples still do


def _row(dtype, shape, graph, eager, kind="square", cls="128", staged=(False, False)):
    return dict(dtype=dtype, shape=shape, layout="NN", ratio_graph=graph, ratio_eager=eager, kind=kind, cls=cls,
                graph_staged=staged[0], eager_staged=staged[1])


def test_summarize_geomean_and_minimum_per_dtype():
    rows = [_row("bf16", "1x2x3", 2.0, 1.0), _row("bf16", "4x5x6", 0.5, 0.25), _row("fp16", "7x8x9", 1.5, 3.0)]
    bf16, *_ = sweep.summarize(rows)
    fp16 = next(line for line in sweep.summarize(rows) if line.startswith("fp16 over"))
    assert bf16.startswith("bf16 over 2 shapes")
    assert f"graph geomean {math.sqrt(2.0 * 0.5):.2f}, min 0.50 at 4x5x6 NN" in bf16
    assert f"eager geomean {math.sqrt(0.25):.2f}, min 0.25 at 4x5x6 NN" in bf16
    assert "graph geomean 1.50, min 1.50 at 7x8x9 NN; eager geomean 3.00, min 3.00 at 7x8x9 NN" in fp16


def test_summarize_per_class_per_kind_and_unstaged():
    rows = [_row("bf16", "a", 2.0, 1.0, "square", "odd", (True, False)), _row("bf16", "b", 0.5, 0.5, "forward", "odd"),
            _row("bf16", "c", 1.0, 2.0, "forward", "128")]
    lines = sweep.summarize(rows)
    assert lines[0].startswith("bf16 over 3 shapes")
    # a stages operands in its graph only: left out of the graph column, counted in the eager one
    unstaged = next(line for line in lines if line.startswith("bf16 not staged"))
    assert "graph (2 shapes) geomean 0.71, min 0.50 at b NN" in unstaged
    assert f"eager (3 shapes) geomean {statistics.geometric_mean([1.0, 0.5, 2.0]):.2f}" in unstaged
    assert any(line.startswith("bf16 kind forward (2): graph geomean 0.71, min 0.50 at b NN") for line in lines)
    assert any(line.startswith("bf16 kind square (1): graph geomean 2.00") for line in lines)
    by_class = [line for line in lines if " class " in line]
    assert [line.split(" (")[0] for line in by_class] == ["bf16 class odd", "bf16 class 128"]  # in class order
    assert "bf16 class odd (2): graph geomean 1.00, min 0.50 at b NN" in by_class[0]


def test_rows_record_kind_class_and_staging():
    row = sweep._row(Shape(96, 4096, 1000, "NT", 4, "batched"), 2, {"torch": 10.0, "tritonmm": 8.0},
                     {"torch": 12.0, "tritonmm": 30.0}, ("tma+staged 64x64x64 w4 s4", "pointer 64x64x64 w4 s4"), 1e-3)
    assert row["shape"] == "4x(96x4096x1000)" and row["Z"] == 4 and row["kind"] == "batched"
    assert row["cls"] == "8" and row["dims_cls"] == "32/128/8"
    assert row["graph_staged"] and not row["eager_staged"] and "(eager: pointer" in row["config"]
    assert row["ratio_graph"] == 1.25 and row["ratio_eager"] == 0.4


def test_sweep_table_and_files(tmp_path):
    row = sweep._row(Shape(77, 4099, 2049, "NT", kind="unaligned"), 8, {"torch": 10.0, "tritonmm": 8.0},
                     {"torch": 12.0, "tritonmm": 30.0}, ("pointer 64x128x64 w4 s4",) * 2, None)
    rows = [dict(row, dtype="bf16"), dict(row, dtype="fp16", rel_err=2.5e-3)]
    table = report.sweep_table(rows)
    assert "1.25" in table and "0.40" in table and "pointer 64x128x64" in table and "2.5e-03" in table
    assert "unaligned" in table and " odd " in table
    summary = sweep.summarize(rows)
    paths = report.write_sweep(rows, summary, {"gpu": "test", "command": "python -m bench --preset sweep"}, tmp_path)
    assert [p.name for p in paths] == ["sweep.json", "sweep.csv", "sweep.png", "RESULTS.md"]
    assert all(p.stat().st_size > 0 for p in paths)
    page = (tmp_path / "RESULTS.md").read_text()
    assert page.startswith("# Benchmark results: test") and summary[0] in page and "![sweep](sweep.png)" in page


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_sweep_without_gpu_says_so_and_exits_3():
    out = run_bench("--preset", "sweep", "--draw", "8")
    assert out.returncode == 3, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found")
    assert "Not honoured without a GPU: --preset sweep, --draw 8." in out.stdout
    assert "Nothing asked for ran: --preset sweep" in out.stderr and "Traceback" not in out.stderr


def test_sweep_runs_alone():
    out = run_bench("--preset", "sweep", "--preset", "square")
    assert out.returncode == 2 and "runs on its own" in out.stderr
    out = run_bench("--preset", "sweep", "--dtype", "fp32")
    assert out.returncode == 2 and "fp16, bf16 and fp8 only" in out.stderr


def test_fp8_sweep_shapes_are_x_at_w_transposed():
    from bench import fp8
    assert "fp8" in sweep.DTYPES  # in the default sweep
    shapes = sweep.shapes_for("fp8")
    assert sweep.shapes_for("bf16") == sweep.SHAPES
    assert {s.layout for s in shapes} == {"NT"} and len(set(shapes)) == len(shapes)
    assert {s[:3] for s in shapes} == {s[:3] for s in sweep.SHAPES}
    assert len(shapes) == len(sweep.SHAPES) - 1  # 4096^3 is listed as a square and as x @ W.T
    refused = [s[:4] for s in shapes if fp8.torch_refuses(*s[:3])]
    assert (77, 4099, 2049, "NT") in refused and (2048, 2048, 1000, "NT") in refused
    assert (4096, 4096, 4000, "NT") not in refused and (1, 4096, 4096, "NT") not in refused
    assert all(n % 16 or k % 16 for _, n, k, _ in refused) and len(refused) == 7


def _fp8_sweep_rows():
    ok = sweep._row(Shape(4096, 4096, 4096, "NT"), 2, {"torch": 200.0, "tritonmm": 160.0},
                    {"torch": 210.0, "tritonmm": 175.0}, ("tma 128x256x128 w8 s4",) * 2, 3e-3)
    alone = sweep._row(Shape(77, 4099, 2049, "NT"), 8, {"tritonmm": 9.0}, {"tritonmm": 20.0},
                       ("pointer 64x64x128 w4 s4",) * 2, 3e-3,
                       "torch._scaled_mm refuses: N=4099 and K=2049 not a multiple of 16")
    return [dict(dtype="fp8", **ok), dict(dtype="fp8", **alone)]


def test_fp8_sweep_refused_shapes_summary_table_and_files(tmp_path):
    rows = _fp8_sweep_rows()
    assert rows[1]["torch_graph_us"] is None and rows[1]["ratio_graph"] is None and rows[0]["ratio_graph"] == 1.25
    line, *breakdown = sweep.summarize(rows)
    assert line.startswith("fp8 over 1 shapes (1 more that torch._scaled_mm refuses, tritonmm timed alone: "
                           "77x4099x2049 NT), torch._scaled_mm time / tritonmm time: graph geomean 1.25, min 1.25 "
                           "at 4096x4096x4096 NT; eager geomean 1.20")
    assert breakdown == ["fp8 kind listed (1): graph geomean 1.25, min 1.25 at 4096x4096x4096 NT; eager geomean 1.20, "
                         "min 1.20 at 4096x4096x4096 NT", "fp8 class 128 (1): graph geomean 1.25, min 1.25 at "
                         "4096x4096x4096 NT; eager geomean 1.20, min 1.20 at 4096x4096x4096 NT"]
    assert sweep.summarize(rows[1:]) == ["fp8: no shape with a torch._scaled_mm time (1 shapes, tritonmm timed alone)"]
    table = report.sweep_table(rows).splitlines()
    assert table[3].split()[:8] == ["fp8", "77x4099x2049", "NT", "listed", "odd", "-", "9.0", "-"]
    assert "1.25" in table[2] and "tma 128x256x128" in table[2]
    bf16 = dict(rows[0], dtype="bf16", layout="NN")  # a mixed sweep: fp8 beside a 16-bit dtype
    paths = report.write_sweep(rows + [bf16], sweep.summarize(rows + [bf16]), {"gpu": "test"}, tmp_path / "sweep_fp8")
    assert [p.name for p in paths] == ["sweep.json", "sweep.csv", "sweep.png", "RESULTS.md"]
    assert all(p.stat().st_size for p in paths)


@pytest.mark.gpu
def test_gpu_measure_small_shapes():
    rows = sweep.measure("bf16", [(64, 96, 128, "NN"), (1, 256, 192, "NT")], rounds=1)
    assert [r["shape"] for r in rows] == ["64x96x128", "1x256x192"]
    for r in rows:
        for key in ("torch_graph_us", "tritonmm_graph_us", "ratio_graph", "torch_eager_us", "tritonmm_eager_us",
                    "ratio_eager"):
            assert math.isfinite(r[key]) and r[key] > 0, (key, r)
        assert r["rel_err"] < 1e-2 and r["config"].split()[0] in ("pointer", "tma")


@pytest.mark.gpu
def test_gpu_measure_batched_and_transposed_products():
    rows = sweep.measure("bf16", [Shape(64, 96, 128, "TN", kind="backward"), Shape(40, 48, 64, "NT", 3, "batched")])
    assert [r["shape"] for r in rows] == ["64x96x128", "3x(40x48x64)"] and [r["Z"] for r in rows] == [1, 3]
    for r in rows:
        assert r["ratio_graph"] > 0 and r["ratio_eager"] > 0 and r["rel_err"] < 1e-2


@pytest.mark.gpu
def test_gpu_measure_fp8_small_shapes():
    from bench import fp8
    if not fp8.has_fp8():
        pytest.skip("needs FP8 tensor cores")
    rows = sweep.measure("fp8", [(64, 96, 128, "NT"), (33, 50, 64, "NT")], rounds=1)
    assert rows[0]["ratio_graph"] > 0 and rows[0]["note"] is None
    assert rows[1]["torch_graph_us"] is None and "refuses" in rows[1]["note"]
    for r in rows:
        assert r["rel_err"] < 1e-2 and r["tritonmm_graph_us"] > 0 and r["tritonmm_eager_us"] > 0
    assert sweep.summarize(rows)[0].startswith("fp8 over 1 shapes (1 more that torch._scaled_mm refuses")
