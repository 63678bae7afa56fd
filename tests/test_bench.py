"""The benchmark's pieces: the bytes model, the registry, the CPU fallback, a small GPU run."""
import json
import os
import subprocess
import sys

import pytest
import torch
from conftest import HAS_GPU

import tritonmm
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
        from cuda_reference import runs_on  # step 12 (wgmma) only on compute capability 9.0
        assert sum(i.name.startswith("cuda") for i in sixteen) == 5 + runs_on("wgmma")


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


def test_headline_series_by_precision_not_by_a_torch_mm_row():
    # --impl tritonmm or --impl cuda leaves out torch.mm: the headline series stay, fp8's per-implementation
    # series are for fp8 alone
    rows = [_row("bf16", "tritonmm (autotuned)", "block", "512x512x512", 300, "128x128x64 (tma)"),
            _row("bf16", "tritonmm 64x64x32", "block", "512x512x512", 100, "64x64"),
            _row("bf16", "cuda wmma", "thread", "512x512x512", 90, "128x128"),
            _row("bf16", "cuda naive", "thread", "512x512x512", 1, "1x1")]
    assert [name for name, _ in report._headline(rows)] == ["tritonmm (autotuned)", "best CUDA rung", "cuda naive"]
    assert [name for name, _ in report._headline(rows[:2])] == ["tritonmm (autotuned)"]
    fp8 = [_row("fp8", "torch._scaled_mm, row-wise", "library", "512x512x512", 500, "torch._scaled_mm"),
           _row("fp8", "tritonmm.scaled_mm, row-wise", "block", "512x512x512", 400, "tma 128x128x128 w8 s4")]
    assert [name for name, _ in report._headline(fp8)] == [r["impl"] for r in fp8]
    assert report._bar_text(dict(fp8[1], pct_torch=80.0), fp8).endswith("80% of _scaled_mm")
    assert report._bar_text(dict(rows[0], pct_torch=80.0), rows).endswith("80% of cuBLAS")


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


# ---- --dtype fp8: tritonmm.scaled_mm against torch._scaled_mm (bench/fp8.py) ------------------------------

def test_fp8_torch_scaled_mm_rule():
    from bench import fp8
    assert fp8.torch_refuses(4096, 4096, 4096) is None
    assert fp8.torch_refuses(1, 4096, 4000) is None  # M is free; K = 4000 is 16 * 250
    assert "K=1000" in fp8.torch_refuses(2048, 2048, 1000) and "N=" not in fp8.torch_refuses(2048, 2048, 1000)
    assert "N=4099 and K=2049" in fp8.torch_refuses(77, 4099, 2049)
    assert set(fp8.calls(64, 48, 32)) == {fp8.TORCH, fp8.TRITONMM}
    assert set(fp8.calls(64, 50, 32)) == {fp8.TRITONMM}


def test_fp8_a_torch_refusal_at_run_time_leaves_tritonmm():
    from bench import fp8

    def refuse(*ops):
        raise RuntimeError("Invalid scaling configuration\nmore")
    fns, note = fp8.checked({fp8.TORCH: refuse, fp8.TRITONMM: lambda *ops: None}, ())
    assert list(fns) == [fp8.TRITONMM] and note == "torch._scaled_mm raised: Invalid scaling configuration"
    fns = {fp8.TORCH: lambda *ops: None, fp8.TRITONMM: lambda *ops: None}
    assert fp8.checked(fns, ()) == (fns, None)

    def bad_value(*ops):
        raise ValueError("scale_a must be float32")
    fns, note = fp8.checked({fp8.TORCH: bad_value, fp8.TRITONMM: lambda *ops: None}, ())
    assert list(fns) == [fp8.TRITONMM] and note == "torch._scaled_mm raised: scale_a must be float32"


@pytest.mark.parametrize("scales", ["tensor", "row"])
def test_fp8_operands_are_what_torch_scaled_mm_takes(scales, device):
    from bench import fp8
    M, N, K = 32, 48, 64
    a, b, sa, sb = fp8.operands(M, N, K, scales, device=device)
    assert a.dtype == b.dtype == torch.float8_e4m3fn and a.shape == (M, K) and b.shape == (K, N)
    assert a.is_contiguous() and b.stride() == (1, K)  # b = W.T of a row-major (N, K) weight: column-major
    assert sa.dtype == sb.dtype == torch.float32
    assert (sa.shape, sb.shape) == (((), ()) if scales == "tensor" else ((M, 1), (1, N)))
    errs = fp8.rel_errors({fp8.TRITONMM: fp8.calls(M, N, K)[fp8.TRITONMM]}, (a, b, sa, sb))
    assert errs[fp8.TRITONMM] < 1e-2  # the bf16 output's rounding


@pytest.mark.parametrize("scales", ["tensor", "row"])
def test_fp8_config_is_the_one_scaled_mm_tuned(scales, device, monkeypatch):
    # The scales and the output dtype are part of the tuning key: the config shown must be looked up
    # under scaled_mm's key, not start another product's tuning (on a GPU) under a key of its own.
    from bench import common, fp8
    from tritonmm import tuning
    keys, choose = [], tuning.choose_config
    monkeypatch.setattr(tuning, "choose_config", lambda product: keys.append(product.tuning_key) or choose(product))
    ops = fp8.operands(40, 80, 96, scales, device=device)  # a shape no other test runs: no relaunch
    tritonmm.scaled_mm(*ops, out_dtype=fp8.OUT_DTYPE)
    remembered = set(tuning._memory)
    text, tile = common.tritonmm_config(*ops, out_dtype=fp8.OUT_DTYPE)
    assert len(keys) == 2 and keys[0] == keys[1] and set(tuning._memory) == remembered
    assert keys[0][5].endswith(f"+scale-{scales}-{'tensor' if scales == 'tensor' else 'column'}+bfloat16")
    assert text.split()[1].startswith(f"{tile[0]}x{tile[1]}x")


def _fp8_measured(shape, scales="row", refused=False, rounds=3):
    from bench import fp8
    M, N, K = (int(v) for v in shape.split("x"))
    ms = {fp8.TRITONMM: 1.0} if refused else {fp8.TORCH: 1.2, fp8.TRITONMM: 1.0}
    return dict(shape=shape, M=M, N=N, K=K, scales=scales, ms=ms,
                spread_pct={n: (2.0 if rounds > 1 else None) for n in ms}, rel_err={n: 3e-3 for n in ms},
                config="tma 128x256x128 w8 s4", tile=(128, 256), note=fp8.torch_refuses(M, N, K))


def test_fp8_rows_and_table():
    from bench import __main__ as cli, fp8
    assert cli.impl_names("fp8") == ["torch._scaled_mm, tensor-wise", "tritonmm.scaled_mm, tensor-wise",
                                     "torch._scaled_mm, row-wise", "tritonmm.scaled_mm, row-wise"]
    torch_row, ours = cli.fp8_rows(_fp8_measured("4096x4096x4096"))
    assert torch_row["impl"] == "torch._scaled_mm, row-wise" and torch_row["level"] == "library"
    assert torch_row["tile"] == "torch._scaled_mm"  # cuBLASLt, or CUTLASS kernels inside torch on sm90
    assert cli.is_base(torch_row) and not cli.is_base(ours)  # the fp8 compute roof: torch._scaled_mm's best
    assert torch_row["pct_torch"] == pytest.approx(100) and ours["pct_torch"] == pytest.approx(120)
    assert ours["tflops"] == pytest.approx(2 * 4096 ** 3 / 1e-3 / 1e12) and ours["tile"].startswith("tma 128x256")
    n = 4096
    assert ours["model_bytes"] == n * n * (n // 256) + n * n * (n // 128) + 2 * n * n  # FP8 reads, a bf16 write
    assert torch_row["model_bytes"] is None and ours["rel_err"] == 3e-3 and ours["spread_pct"] == 2.0
    refused = cli.fp8_rows(_fp8_measured("77x4099x2049", "tensor", refused=True))
    assert refused[0]["ms"] is None and "refuses" in refused[0]["note"] and refused[1]["pct_torch"] is None
    assert [r["impl"] for r in cli.fp8_rows(_fp8_measured("64x64x64"), [fp8.TRITONMM])] == \
        ["tritonmm.scaled_mm, row-wise"]
    table = report.table([torch_row, ours, *refused])
    assert report.FP8_BASE in table and "% torch.mm" not in table and report.SPREAD in table
    assert "torch._scaled_mm refuses: N=4099 and K=2049 not a multiple of 16" in table and "120" in table


def test_fp8_results_written(tmp_path):
    from bench import __main__ as cli
    rows = [r for shape in ("4096x4096x4096", "1024x4096x14336") for scales in ("tensor", "row")
            for r in cli.fp8_rows(_fp8_measured(shape, scales))]
    rows += cli.fp8_rows(_fp8_measured("1023x1025x1027", refused=True))
    meta = dict(gpu="Test GPU", date="today", torch="t", triton="t", python="3", command="python -m bench --dtype fp8",
                copy_TBps=3.0, peaks_tflops={"fp8": None})
    paths = report.write(rows, meta, tmp_path)
    assert all(p.stat().st_size > 0 for p in paths) and (tmp_path / "tflops.png") in paths
    page = (tmp_path / "RESULTS.md").read_text()
    assert "## fp8 (e4m3 from quantize_fp8" in page and "torch._scaled_mm, row-wise" in page


def test_fp8_suite_table():
    from bench import suites
    table = suites.fp8_table([_fp8_measured("4096x4096x4096", "tensor"),
                              dict(_fp8_measured("77x4099x2049", refused=True), rel_err={})])
    lines = table.splitlines()
    assert "_scaled_mm rel err" in lines[0] and len(lines) == 4
    assert "1.20" in lines[2] and "3.0e-03" in lines[2] and "tma 128x256x128" in lines[2]
    assert lines[3].split()[:4] == ["77x4099x2049", "row", "-", "1.0000"]


def test_fp8_dtype_arguments():
    out = run_bench("--traffic", "--dtype", "fp8")
    assert out.returncode == 2 and "--traffic profiles fp32 (IEEE), fp16 and bf16" in out.stderr
    out = run_bench("--dtype", "fp9")
    assert out.returncode == 2 and "'fp8'" in out.stderr  # among the choices
    out = run_bench("--preset", "scaling", "--dtype", "fp8")
    assert out.returncode == 2 and "runs on its own" in out.stderr


@pytest.mark.gpu
def test_gpu_fp8_table(tmp_path):
    if torch.cuda.get_device_capability() < (8, 9):
        pytest.skip("needs FP8 tensor cores")
    out = run_bench("--dtype", "fp8", "--shape", "256x512x1024", "--shape", "100x50x64", "--rounds", "2",
                    "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "## fp8" in out.stdout and report.FP8_BASE in out.stdout and "refuses: N=50" in out.stdout
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert len(rows) == 8
    for r in rows:
        if r["ms"] is not None:
            assert r["rel_err"] < 1e-2 and r["tflops"] > 0
    assert sum(r["ms"] is None for r in rows) == 2  # torch._scaled_mm at 100x50x64, both scale kinds
