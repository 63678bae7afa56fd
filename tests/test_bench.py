"""The benchmark's pieces: the bytes model, the registry, the CPU fallback, a small GPU run."""
import json
import os
import subprocess
import sys

import pytest
from conftest import HAS_GPU

from bench import impls, report, traffic


def test_traffic_model_tile_cuts_reads():
    n = 4096
    naive = traffic.modeled_bytes(n, n, n, 4, (1, 1))
    assert naive == (2 * n ** 3 + n * n) * 4
    for t in (8, 16, 32):
        tiled = traffic.modeled_bytes(n, n, n, 4, (t, t))
        assert tiled == (2 * n ** 3 // t + n * n) * 4  # T-fold fewer reads
    assert traffic.modeled_bytes(n, n, n, 4, None) is None
    assert traffic.minimum_bytes(n, n, n, 2) == 3 * n * n * 2
    assert traffic.intensity(n, n, n, traffic.modeled_bytes(n, n, n, 4, (32, 32))) == pytest.approx(2 * n ** 3 / (4 * (2 * n ** 3 / 32 + n * n)))


def test_traffic_model_edge_tiles_count_whole():
    assert traffic.modeled_bytes(100, 100, 10, 4, (64, 64)) == (100 * 10 * 2 + 10 * 100 * 2 + 100 * 100) * 4


def test_registry_has_every_level():
    fp32 = impls.registry("fp32")
    assert {i.level for i in fp32} == {"thread", "block", "library"}
    assert sum(i.name.startswith("cuda") for i in fp32) == 12
    assert {i.level for i in impls.registry("tf32")} == {"block", "library"}
    for prec in ("fp16", "bf16"):  # the tensor-core rungs of the ladder
        sixteen = impls.registry(prec)
        assert {i.level for i in sixteen} == {"thread", "block", "library"}
        assert sum(i.name.startswith("cuda") for i in sixteen) == 5


def test_table_shows_spread_only_for_rounds():
    row = dict(impl="torch.mm", level="library", tile="cuBLAS", shape="8x8x8", ms=1.0, tflops=2.0, pct_torch=100.0,
               x_naive=None, model_bytes=None, intensity=None, rel_err=1e-7, note=None, spread_pct=None)
    assert report.SPREAD not in report.table([row])
    assert report.SPREAD in report.table([dict(row, spread_pct=3.25)]) and "3.2" in report.table([dict(row, spread_pct=3.25)])


def _row(precision, impl, level, shape, tflops, tile="-", intensity=None, note=None):
    m, n, k = (int(v) for v in shape.split("x"))
    return dict(precision=precision, impl=impl, level=level, shape=shape, M=m, N=n, K=k, tile=tile,
                ms=None if note else 2 * m * n * k / tflops / 1e9, tflops=None if note else tflops, pct_torch=None,
                x_naive=None, model_bytes=None, intensity=intensity, rel_err=1e-7, note=note, spread_pct=None)


def test_charts_from_synthetic_rows(tmp_path):
    rows = []
    for shape, scale in (("256x256x256", 0.5), ("1024x1024x1024", 1.0), ("1000x1000x4000", 1.2)):
        rows += [_row("fp32", "torch.mm", "library", shape, 50 * scale, "cuBLAS"),
                 _row("fp32", "cuda naive", "thread", shape, 0.5 * scale, "1x1", 0.25),
                 _row("fp32", "cuda tiled T=32", "thread", shape, 9 * scale, "32x32", 8),
                 _row("fp32", "cuda double_buffer 2blk/SM", "thread", shape, 42 * scale, "128x128", 32),
                 _row("fp32", "cuda double_buffer 1blk/SM", "thread", shape, 41.9 * scale, "128x128", 32),
                 _row("fp32", "tritonmm (autotuned)", "block", shape, 42 * scale, "128x128x32 (tma)", 32),
                 _row("fp32", "tritonmm 64x64x32", "block", shape, 33 * scale, "64x64", 16),
                 _row("bf16", "torch.mm", "library", shape, 700 * scale, "cuBLAS"),
                 _row("bf16", "tritonmm (autotuned)", "block", shape, 650 * scale, "128x256x64 (tma)", 84),
                 _row("bf16", "tritonmm 32x32x32", "block", shape, 30 * scale, "32x32", 16, note="skipped")]
    # the largest square shape, not the one with the most work
    assert report.chart_shape(rows) == "1024x1024x1024"
    assert report.chart_shape(rows, "bf16") == "1024x1024x1024"
    meta = dict(gpu="Test GPU", date="today", torch="t", triton="t", python="3", command="python -m bench",
                copy_TBps=3.0, peaks_tflops={"fp32": 60.0, "bf16": 840.0})
    paths = report.write(rows, meta, tmp_path)
    for name in ("ladder.png", "tflops.png", "roofline.png"):
        assert tmp_path / name in paths and (tmp_path / name).stat().st_size > 10_000, name
    assert "![ladder](ladder.png)" in (tmp_path / "RESULTS.md").read_text()
    # without any ladder rows (no fp32 run) the ladder chart still draws the tile sweep
    only_bf16 = [r for r in rows if r["precision"] == "bf16"]
    assert report.ladder_chart(only_bf16, tmp_path / "bf16.png", meta).stat().st_size > 0
    assert report.tflops_chart(only_bf16, tmp_path / "bf16_tflops.png").stat().st_size > 0


def test_rounds_must_be_positive():
    out = run_bench("--rounds", "0")
    assert out.returncode == 2 and "--rounds must be at least 1" in out.stderr


def run_bench(*args, env=None):
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=900)


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_cpu_fallback_exits_zero_with_a_message():
    out = run_bench("--quick")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found")
    assert "relative error" in out.stdout and "(ok)" in out.stdout and "tiled T=32" in out.stdout
    assert "Traceback" not in out.stderr


@pytest.mark.gpu
def test_small_gpu_run_writes_results(tmp_path):
    out = run_bench("--shape", "257x129x300", "--dtype", "fp32", "--dtype", "bf16", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads((tmp_path / "results.json").read_text())
    rows = data["rows"]
    assert {r["level"] for r in rows} == {"thread", "block", "library"}
    for r in rows:
        bound = 1e-5 if r["precision"] == "fp32" else 1e-2
        assert r["rel_err"] < bound, r
        assert r["tflops"] > 0
    page = (tmp_path / "RESULTS.md").read_text()
    assert "## fp32 (IEEE, TF32 off)" in page and "cuda warptile" in page and "![roofline](roofline.png)" in page
    for f in ("results.csv", "tflops.png", "roofline.png"):
        assert (tmp_path / f).stat().st_size > 0


@pytest.mark.gpu
def test_rounds_interleave_and_report_spread(tmp_path):
    out = run_bench("--shape", "512x384x256", "--dtype", "bf16", "--impl", "torch.mm", "--impl", "autotuned",
                    "--rounds", "3", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "median of 3 interleaved rounds" in out.stdout and report.SPREAD in out.stdout
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["impl"] for r in rows] == ["torch.mm", "tritonmm (autotuned)"]
    for r in rows:
        assert r["spread_pct"] is not None and r["spread_pct"] >= 0 and r["rel_err"] < 1e-2
