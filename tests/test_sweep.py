"""The sweep's shape suite, its summary, and its run without a GPU."""
import math

import pytest
from conftest import HAS_GPU
from test_bench import run_bench

from bench import report, sweep


def test_shapes_cover_every_group():
    shapes = sweep.SHAPES
    assert len(shapes) >= 40 and len(set(shapes)) == len(shapes)
    squares = {m for m, n, k, _ in shapes if m == n == k}
    assert {256, 768, 1536, 3072, 6144, 8192} <= squares  # non-powers of two among them
    assert any(m == 1 for m, *_ in shapes) and any(m == 8192 and layout == "NT" for m, _, _, layout in shapes)
    assert any(min(m, n, k) <= 64 and max(m, n, k) >= 8192 for m, n, k, _ in shapes)  # thin and wide
    assert any(all(d % 8 for d in (m, n, k)) for m, n, k, _ in shapes)  # no dimension 16-byte aligned in 16 bits
    assert any(k % 64 and not (m % 8 or n % 8 or k % 8) for m, n, k, _ in shapes)  # aligned, but a partial K step
    assert {layout for *_, layout in shapes} == {"NN", "NT"}


def test_draw_is_repeatable_and_keeps_to_its_kinds():
    shapes = sweep.draw(40, seed=3)
    assert shapes == sweep.draw(40, seed=3) and shapes != sweep.draw(40, seed=4)
    assert len(set(shapes)) == 40 and not {s[:3] for s in shapes} & {s[:3] for s in sweep.SHAPES}
    assert all(m * n * k <= sweep.DRAW_MAX_MACS for m, n, k, _ in shapes)
    kinds = {kind: shapes[i::len(sweep.DRAW_KINDS)] for i, kind in enumerate(sweep.DRAW_KINDS)}
    assert all(m == n == k and m % 64 == 0 for m, n, k, _ in kinds["square"])
    assert all(d % 8 for m, n, k, _ in kinds["unaligned"] for d in (m, n, k))
    assert all(d % 16 == 0 for m, n, k, _ in kinds["aligned"] for d in (m, n, k))
    assert all(m <= 64 and (n, k) in sweep.DRAW_WIDTHS and layout == "NT" for m, n, k, layout in kinds["decode"])
    assert all(m >= 128 and (n, k) in sweep.DRAW_WIDTHS for m, n, k, _ in kinds["llm"])
    assert sweep.shapes_for("fp8", shapes) == list(dict.fromkeys((m, n, k, "NT") for m, n, k, _ in shapes))
    assert len(sweep.draw(sweep.DRAW_MAX, seed=1)) == sweep.DRAW_MAX  # ends: each kind has room for its share
    with pytest.raises(ValueError, match="n must be"):
        sweep.draw(sweep.DRAW_MAX + 1, seed=1)


def test_draw_goes_with_the_sweep_only():
    out = run_bench("--draw", "4", "--preset", "square")
    assert out.returncode == 2 and "--draw draws the sweep's shapes" in out.stderr
    out = run_bench("--draw", "999", "--preset", "sweep")
    assert out.returncode == 2 and "--draw takes 1-" in out.stderr


def _row(dtype, shape, graph, eager):
    return dict(dtype=dtype, shape=shape, layout="NN", ratio_graph=graph, ratio_eager=eager)


def test_summarize_geomean_and_minimum_per_dtype():
    rows = [_row("bf16", "1x2x3", 2.0, 1.0), _row("bf16", "4x5x6", 0.5, 0.25), _row("fp16", "7x8x9", 1.5, 3.0)]
    bf16, fp16 = sweep.summarize(rows)
    assert bf16.startswith("bf16 over 2 shapes")
    assert f"graph geomean {math.sqrt(2.0 * 0.5):.2f}, min 0.50 at 4x5x6 NN" in bf16
    assert f"eager geomean {math.sqrt(0.25):.2f}, min 0.25 at 4x5x6 NN" in bf16
    assert "graph geomean 1.50, min 1.50 at 7x8x9 NN; eager geomean 3.00, min 3.00 at 7x8x9 NN" in fp16


def test_sweep_table_and_files(tmp_path):
    row = dict(dtype="bf16", shape="77x4099x2049", M=77, N=4099, K=2049, layout="NT", copies=8,
               torch_graph_us=10.0, tritonmm_graph_us=8.0, ratio_graph=1.25, torch_eager_us=12.0,
               tritonmm_eager_us=30.0, ratio_eager=0.4, config="pointer 64x128x64 w4 s4", rel_err=None)
    table = report.sweep_table([row, dict(row, dtype="fp16", rel_err=2.5e-3)])
    assert "1.25" in table and "0.40" in table and "pointer 64x128x64" in table and "2.5e-03" in table
    paths = report.write_sweep([row, dict(row, dtype="fp16")], sweep.summarize([row]), {"gpu": "test"}, tmp_path)
    assert [p.name for p in paths] == ["sweep.json", "sweep.csv", "sweep.png"]
    assert all(p.stat().st_size > 0 for p in paths)


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_sweep_without_gpu_says_so():
    out = run_bench("--preset", "sweep")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found") and len(out.stdout.splitlines()) == 1
    assert "Traceback" not in out.stderr


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
    assert {layout for *_, layout in shapes} == {"NT"} and len(set(shapes)) == len(shapes)
    assert {(m, n, k) for m, n, k, _ in shapes} == {(m, n, k) for m, n, k, _ in sweep.SHAPES}
    assert len(shapes) == len(sweep.SHAPES) - 1  # 4096^3 is listed as a square and as x @ W.T
    refused = [s for s in shapes if fp8.torch_refuses(*s[:3])]
    assert (77, 4099, 2049, "NT") in refused and (2048, 2048, 1000, "NT") in refused
    assert (4096, 4096, 4000, "NT") not in refused and (1, 4096, 4096, "NT") not in refused
    assert all(n % 16 or k % 16 for _, n, k, _ in refused) and len(refused) == 7


def _fp8_sweep_rows():
    ok = sweep._row(4096, 4096, 4096, "NT", 2, {"torch": 200.0, "tritonmm": 160.0}, {"torch": 210.0, "tritonmm": 175.0},
                    "tma 128x256x128 w8 s4", 3e-3)
    alone = sweep._row(77, 4099, 2049, "NT", 8, {"tritonmm": 9.0}, {"tritonmm": 20.0}, "pointer 64x64x128 w4 s4", 3e-3,
                       "torch._scaled_mm refuses: N=4099 and K=2049 not a multiple of 16")
    return [dict(dtype="fp8", **ok), dict(dtype="fp8", **alone)]


def test_fp8_sweep_refused_shapes_summary_table_and_files(tmp_path):
    rows = _fp8_sweep_rows()
    assert rows[1]["torch_graph_us"] is None and rows[1]["ratio_graph"] is None and rows[0]["ratio_graph"] == 1.25
    (line,) = sweep.summarize(rows)
    assert line.startswith("fp8 over 1 shapes (1 more that torch._scaled_mm refuses, tritonmm timed alone: "
                           "77x4099x2049 NT), torch._scaled_mm time / tritonmm time: graph geomean 1.25, min 1.25 "
                           "at 4096x4096x4096 NT; eager geomean 1.20")
    assert sweep.summarize(rows[1:]) == ["fp8: no shape with a torch._scaled_mm time (1 shapes, tritonmm timed alone)"]
    table = report.sweep_table(rows).splitlines()
    assert table[3].split()[:6] == ["fp8", "77x4099x2049", "NT", "-", "9.0", "-"]
    assert "1.25" in table[2] and "tma 128x256x128" in table[2]
    bf16 = dict(rows[0], dtype="bf16", layout="NN")  # a mixed sweep: fp8 beside a 16-bit dtype
    paths = report.write_sweep(rows + [bf16], sweep.summarize(rows + [bf16]), {"gpu": "test"}, tmp_path / "sweep_fp8")
    assert [p.name for p in paths] == ["sweep.json", "sweep.csv", "sweep.png"] and all(p.stat().st_size for p in paths)


@pytest.mark.gpu
def test_gpu_measure_small_shapes():
    rows = sweep.measure("bf16", [(64, 96, 128, "NN"), (1, 256, 192, "NT")], rounds=1)
    assert [r["shape"] for r in rows] == ["64x96x128", "1x256x192"]
    for r in rows:
        for key in ("torch_graph_us", "tritonmm_graph_us", "ratio_graph", "torch_eager_us", "tritonmm_eager_us",
                    "ratio_eager"):
            assert math.isfinite(r[key]) and r[key] > 0, (key, r)
        assert r["rel_err"] < 1e-2 and r["config"].split()[0] in ("pointer", "tma")


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_fp8_sweep_without_gpu_says_so():
    out = run_bench("--preset", "sweep", "--dtype", "fp8")
    assert out.returncode == 0 and out.stdout.startswith("No CUDA GPU found"), out.stderr[-2000:]


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
    assert len(sweep.summarize(rows)) == 1
