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
    for prec in ("tf32", "fp16", "bf16"):
        assert {i.level for i in impls.registry(prec)} == {"block", "library"}


def test_table_shows_spread_only_for_rounds():
    row = dict(impl="torch.mm", level="library", tile="cuBLAS", shape="8x8x8", ms=1.0, tflops=2.0, pct_torch=100.0,
               x_naive=None, model_bytes=None, intensity=None, rel_err=1e-7, note=None, spread_pct=None)
    assert report.SPREAD not in report.table([row])
    assert report.SPREAD in report.table([dict(row, spread_pct=3.25)]) and "3.2" in report.table([dict(row, spread_pct=3.25)])


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
