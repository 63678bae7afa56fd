"""The benchmark's pieces: the bytes model, the registry, the CPU fallback, a small GPU run."""
import contextlib
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


def _later_rows(dtype) -> int:
    """Rows of the ladder's steps after 12 that take dtype and run here: one per built parameter value."""
    from cuda_reference import KERNELS, runs_on
    return sum(max(1, sum(len(v) for v in info.params.values())) for name, info in KERNELS.items()
               if info.step > 12 and dtype in info.dtypes and runs_on(name))


def _levels_16bit() -> set:
    """The levels of the 16-bit tables here: "gluon" too where the Gluon kernel runs (Triton >= 3.8 on sm_90)."""
    from tritonmm.kernels import gluon_gemm
    return {"thread", "block", "library"} | ({"gluon"} if gluon_gemm.available()[0] else set())


def test_registry_has_every_level():
    fp32 = impls.registry("fp32")
    assert {i.level for i in fp32} == {"thread", "block", "library"}
    assert sum(i.name.startswith("cuda") for i in fp32) == 12 + _later_rows(torch.float32)
    assert _later_rows(torch.float32) >= 1  # the fp32 steps after 12 run on any GPU
    assert {i.level for i in impls.registry("tf32")} == {"block", "library"}
    for prec in ("fp16", "bf16"):  # the tensor-core rungs of the ladder
        sixteen = impls.registry(prec)
        assert {i.level for i in sixteen} == _levels_16bit()
        from cuda_reference import runs_on  # steps 12 on only on compute capability 9.0
        assert sum(i.name.startswith("cuda") for i in sixteen) == 5 + runs_on("wgmma") + _later_rows(torch.bfloat16)


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
                 _row("bf16", "tritonmm 32x32x32", "block", shape, 30 * scale, "32x32", 16, note="skipped"),
                 _row("bf16", "cuda wgmma", "thread", shape, 400 * scale, "128x256", 84),
                 _row("bf16", "cuda tma_store 3", "thread", shape, 600 * scale, "128x256", 84),
                 _row("bf16", "cuda tma_store 4", "thread", shape, 690 * scale, "128x256", 84)]
    # the largest square shape, not the one with the most work
    assert report.chart_shape(rows) == "1024x1024x1024"
    assert report.chart_shape(rows, "bf16") == "1024x1024x1024"
    meta = dict(gpu="Test GPU", date="today", torch="t", triton="t", python="3", command="python -m bench",
                copy_TBps=3.0, peaks_tflops={"fp32": 60.0, "bf16": 840.0})
    paths = report.write(rows, meta, tmp_path)
    for name in ("ladder.png", "tflops.png", "roofline.png"):
        assert tmp_path / name in paths and (tmp_path / name).stat().st_size > 10_000, name
    assert "![ladder](ladder.png)" in (tmp_path / "RESULTS.md").read_text()
    # a panel per precision with ladder rows: each step once (its fastest variant), in step order, then
    # tritonmm as planned and torch.mm
    bars = report.ladder_bars(rows, "bf16", "1024x1024x1024")
    assert [r["impl"] for r in bars] == ["cuda wgmma", "cuda tma_store 4", "tritonmm (autotuned)", "torch.mm"]
    assert [report.ladder_step(r["impl"]) for r in report.ladder_bars(rows, "fp32", "1024x1024x1024")] == \
        [1, 3, 8, None, None]
    # without any ladder rows the ladder chart still draws the tile sweep
    only_bf16 = [r for r in rows if r["precision"] == "bf16" and r["level"] != "thread"]
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


def test_gluon_level_in_the_headline_and_the_charts(tmp_path):
    """Rows of the "gluon" level (bench.impls registers them where Triton >= 3.8 runs on Hopper) get a headline
    series of their own, the ladder panel's bar after the CUDA steps, and a panel of the traffic chart."""
    rows = [_row("bf16", "torch.mm", "library", "512x512x512", 400, "cuBLAS"),
            _row("bf16", "tritonmm (autotuned)", "block", "512x512x512", 300, "128x128x64 (tma)"),
            _row("bf16", "gluon cooperative", "gluon", "512x512x512", 280, "128x256"),
            _row("bf16", "gluon pingpong", "gluon", "512x512x512", 250, "128x128"),
            _row("bf16", "cuda wmma", "thread", "512x512x512", 90, "128x128")]
    assert [name for name, _ in report._headline(rows)] == \
        ["torch.mm (cuBLAS)", "tritonmm (autotuned)", "best CUDA rung", "best Gluon schedule"]
    assert [r["impl"] for r in report.ladder_bars(rows, "bf16", "512x512x512")] == \
        ["cuda wmma", "gluon cooperative", "tritonmm (autotuned)", "torch.mm"]
    assert report.ladder_chart(rows, tmp_path / "ladder.png", {}).stat().st_size > 0
    assert report.tflops_chart(rows, tmp_path / "tflops.png").stat().st_size > 0
    assert set(report.LEVEL_COLORS) >= {r["level"] for r in rows}


def test_gluon_rows_only_where_it_runs(monkeypatch):
    """No GPU or Triton < 3.8: the 16-bit tables hold no gluon rows (and the registry still builds)."""
    from tritonmm.kernels import gluon_gemm
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "no"))
    assert not [i for i in impls.registry("bf16", pinned=False) if i.level == "gluon"]
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    rows = [i for i in impls.registry("bf16", pinned=False) if i.level == "gluon"]
    assert [i.name for i in rows] == [f"gluon {name}" for name in gluon_gemm.SCHEDULES]
    tiles = {i.name.split()[1]: i.tile for i in rows}  # a program's tile: in a cluster, both CTAs'
    assert tiles["cooperative"] == (128, 256) and tiles["cluster"] == (256, 256) and tiles["wide"] == (192, 128)
    a, b = torch.ones(16, 12, dtype=torch.bfloat16), torch.ones(12, 8, dtype=torch.bfloat16)
    assert "K = 12" in rows[0].refuses(a, b)
    assert rows[0].refuses(torch.ones(16, 16, dtype=torch.bfloat16), b[:8].repeat(2, 1)) is None


def test_rounds_must_be_positive():
    out = run_bench("--rounds", "0")
    assert out.returncode == 2 and "--rounds must be at least 1" in out.stderr


def run_bench(*args, env=None):
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), timeout=900)


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_cpu_run_names_what_it_cannot_honour_and_writes_out(tmp_path):
    out = run_bench("--quick", "--dtype", "bf16", "--shape", "64x32x16", "--out", str(tmp_path / "new" / "dir"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found")
    assert "Not honoured without a GPU: --quick, --shape 64x32x16, --dtype bf16." in out.stdout
    assert "relative error" in out.stdout and "(ok)" in out.stdout and "tiled T=32" in out.stdout
    assert "Traceback" not in out.stderr
    written = tmp_path / "new" / "dir"
    data = json.loads((written / "cpu.json").read_text())
    assert data["passed"] and data["meta"]["not_honoured"] == ["--quick", "--shape 64x32x16", "--dtype bf16"]
    page = (written / "RESULTS.md").read_text()
    assert page.startswith("# Benchmark results: no GPU (the CPU run)") and f"torch {torch.__version__}" in page
    assert "Command: `python -m bench --quick" in page and "tiled T=32" in page and "--shape 64x32x16" in page


def bench_main(capsys, *args):
    """python -m bench's main in this process (no interpreter start-up): (exit status, stdout, stderr)."""
    from bench import __main__ as cli
    try:
        code = cli.main(list(args))
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.skipif(HAS_GPU, reason="checks the CPU run")
@pytest.mark.parametrize("args", [["--preset", "first-call", "--draw", "3"], ["--preset", "model", "--rounds", "3"],
                                  ["--traffic"]])
def test_gpu_only_runs_exit_3_without_a_gpu(capsys, tmp_path, args):
    code, out, err = bench_main(capsys, *args, "--out", str(tmp_path))
    assert code == 3 and out.startswith("No CUDA GPU found") and "Nothing asked for ran" in err
    assert f"Not honoured without a GPU: {' '.join(args[:2])}" in out
    assert (tmp_path / "RESULTS.md").exists()  # the smoke job that did run


def test_alone_presets_refuse_other_options(capsys):
    for args, message in ((["--preset", "first-call", "--dtype", "fp32"], "--preset first-call runs bf16 and fp16"),
                          (["--preset", "model", "--shape", "8x8x8"], "--preset model runs on its own"),
                          (["--preset", "model", "--dtype", "fp8"], "--preset model runs bf16 and fp16 only"),
                          (["--preset", "model", "--draw", "4"], "--draw draws the sweep's shapes"),
                          (["--preset", "scaling", "--dtype", "bf16"], "nor --dtype"),
                          (["--preset", "first-call", "--quick"], "runs on its own")):
        code, _, err = bench_main(capsys, *args)
        assert code == 2 and message in err, (args, err[-500:])


def test_given_flags_are_named_as_typed():
    from bench import __main__ as cli
    p = cli.parser()
    args = p.parse_args(["--quick", "--shape", "1x2x3", "--shape", "4x5x6", "--rounds", "2", "--preset", "odd"])
    assert cli.given_flags(p, args) == ["--quick", "--preset odd", "--shape 1x2x3", "--shape 4x5x6", "--rounds 2"]
    assert cli.given_flags(p, p.parse_args([])) == []


def test_progress_lines_and_phase_times(capsys):
    from bench.progress import Steps, phase
    record = {}
    with phase("compile", record):
        steps = Steps(3, "table")
        steps.step("fp32 8x8x8 torch.mm")
        steps.step("two at once", 2)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "phase compile ..." and err[1].startswith("[table 1/3, ") and err[1].endswith("] fp32 8x8x8 torch.mm")
    assert err[2].startswith("[table 3/3, ") and err[3].startswith("phase compile: ") and err[3].endswith(" s")
    assert list(record) == ["compile"] and record["compile"] >= 0


def test_rel_err_is_frobenius_and_never_small_on_nan():
    from bench.common import rel_err
    ref = torch.tensor([[3.0, 4.0]], dtype=torch.float64)
    assert rel_err(torch.tensor([[3.0, 4.0]]), ref) == 0
    assert rel_err(torch.tensor([[3.0, 3.0]]), ref) == pytest.approx(1 / 5)
    assert rel_err(torch.tensor([[3.0, 3.0]]), ref, scale=torch.tensor([[6.0, 8.0]])) == pytest.approx(1 / 10)
    for bad in (float("nan"), float("inf"), -float("inf")):
        assert rel_err(torch.tensor([[3.0, bad]]), ref) == float("inf")
        assert rel_err(torch.tensor([[3.0, 4.0]]), torch.tensor([[3.0, bad]])) == float("inf")
    big = torch.full((64, 64), 1e4, dtype=torch.bfloat16)  # one NaN among many good elements is still inf
    big[17, 3] = float("nan")
    assert rel_err(big, torch.full((64, 64), 1e4, dtype=torch.float64)) == float("inf")
    zeros = torch.zeros(2, 2, dtype=torch.float64)
    assert rel_err(zeros.float(), zeros) == 0 and rel_err(torch.ones(2, 2), zeros) > 1e100


def test_quick_leaves_pinned_tiles_out_and_names_untuned_rows(monkeypatch):
    pinned = {f"tritonmm {bm}x{bn}x{bk}" for bm, bn, bk, _ in impls.PINNED_TILES}
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "0")
    quick = {i.name for i in impls.registry("bf16", pinned=False)}
    assert impls.UNTUNED in quick and not quick & pinned and pinned <= {i.name for i in impls.registry("bf16")}
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    fp32 = [i.name for i in impls.registry("fp32")]
    # torch.mm, 12 rungs and the fp32 steps after 12, tritonmm as planned, 3 pinned tiles
    assert impls.TUNED in fp32 and len(fp32) == 17 + _later_rows(torch.float32)


def test_pyproject_declares_the_package_version_and_runtime_imports():
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert project["version"] == tritonmm.__version__
    names = {d.split(">")[0].split("<")[0].split("=")[0].strip() for d in project["dependencies"]}
    assert {"numpy", "ninja", "torch", "triton"} <= names
    assert "pytest-xdist" in project["optional-dependencies"]["dev"]


@pytest.mark.gpu
def test_small_gpu_run_writes_results(tmp_path):
    out = run_bench("--shape", "257x129x300", "--dtype", "fp32", "--dtype", "bf16", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads((tmp_path / "results.json").read_text())
    rows = data["rows"]
    assert {r["level"] for r in rows if r["precision"] == "fp32"} == {"thread", "block", "library"}
    assert {r["level"] for r in rows if r["precision"] == "bf16"} == _levels_16bit()
    from cuda_reference import KERNELS
    tma_steps = {f"cuda {name}" for name, info in KERNELS.items() if info.tma}
    for r in rows:
        if (r.get("note") or "").startswith("refused"):  # K = 300: TMA steps need rows 16 bytes apart
            if r["level"] == "gluon":  # K = 300, N = 129: the Gluon kernel's rows must be 16-byte aligned
                assert "is not a multiple of 8" in r["note"], r
                continue
            assert r["impl"].split()[0] + " " + r["impl"].split()[1] in tma_steps and "16-byte boundary" in r["note"], r
            continue
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
                    "--rounds", "3", "--out", str(tmp_path), env={"TRITONMM_AUTOTUNE": "1"})  # conftest sets 0
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


# ---- --preset model (bench/model_bench.py) and bench/model.py's LlamaLike ----------------------------------

def _prefix_caches(model, idx):
    """Each block's keys and values of the tokens idx, as decoding after them reads them."""
    x, caches = model.tok(idx), []
    for block in model.blocks:
        h, attn = block.norm1(x), block.attn
        B, T, _ = h.shape
        caches.append(tuple(proj(h).view(B, T, attn.kv_heads, attn.head_dim).transpose(1, 2)
                            for proj in (attn.k, attn.v)))
        x = block(x)
    return caches


def test_llama_like_decodes_what_a_causal_pass_computes():
    from bench.model import LlamaLike, make_caches
    torch.manual_seed(0)
    model = LlamaLike(vocab=50, width=32, heads=4, kv_heads=2, hidden=48, layers=2)
    assert model.blocks[0].attn.k.out_features == 16  # two KV heads of 8 serve four query heads
    idx = torch.randint(50, (2, 6))
    with torch.no_grad():
        full = model(idx)
        assert full.shape == (2, 6, 50)
        assert torch.allclose(model(idx, last_only=True), full[:, -1:], atol=1e-6)
        # one token against the cache of the five before it: the causal pass's last position
        step = model(idx[:, -1:], caches=_prefix_caches(model, idx[:, :-1]))
        assert torch.allclose(step, full[:, -1:], atol=1e-5)
        caches = make_caches(model, 2, past=7)
        assert [c[0].shape for c in caches] == [(2, 2, 7, 8)] * 2 and model(idx[:, :1], caches).shape == (2, 1, 50)


def test_model_swapped_copy_shares_weights_and_agrees(device):
    from bench import model_bench
    from bench.model import LlamaLike
    torch.manual_seed(0)
    base = LlamaLike(vocab=40, width=32, heads=4, kv_heads=2, hidden=48, layers=1).to(device)
    swapped = model_bench.swapped_copy(base)
    linears = [m for m in swapped.modules() if isinstance(m, torch.nn.Linear)]
    assert len(linears) == 8 and all(type(m) is tritonmm.nn.Linear for m in linears)  # 7 per layer and the head
    assert all(p is q for p, q in zip(base.parameters(), swapped.parameters()))
    assert not any(type(m) is tritonmm.nn.Linear for m in base.modules())
    idx = torch.randint(40, (2, 5), device=device)
    with torch.no_grad():
        assert torch.allclose(swapped(idx), base(idx), atol=1e-4)


def test_model_table():
    from bench import model_bench
    diff = {"swap_linears": 1e-3, "use_tritonmm": 2e-3}
    rows = [dict(step="train", kind="eager", ms={"aten": 30.0, "swap_linears": 25.0, "use_tritonmm": 24.0},
                 rel_diff=diff, note=""),
            dict(step="decode", kind="graph", ms={"aten": 1.0, "swap_linears": 0.5}, rel_diff=diff,
                 note="use_tritonmm not captured: boom")]
    lines = model_bench.table(rows).splitlines()
    assert "swap_linears ms (x aten)" in lines[0] and len(lines) == 4
    assert "25.00 (x1.20)" in lines[2] and "24.00 (x1.25)" in lines[2] and "1.0e-03 / 2.0e-03" in lines[2]
    assert "0.50 (x2.00)" in lines[3] and " - " in lines[3] and "not captured: boom" in lines[3]
    assert "8 x 1 token after 1024" in lines[3]


def test_model_train_step_returns_a_detached_loss():
    # A loss that kept its autograd graph would keep each parameter's AccumulateGrad node alive, made on the
    # stream of the call that made it; the next backward reuses it, and on a capture's stream that breaks the
    # capture (what emptied the train step's graph row for every variant).
    from bench import model_bench
    from bench.model import LlamaLike, make_batch
    torch.manual_seed(0)
    model = LlamaLike(vocab=40, width=32, heads=4, kv_heads=2, hidden=48, layers=1)
    train = model_bench.step_fn("train", model, make_batch(2, 5, 40, "cpu", torch.Generator().manual_seed(1)))
    loss = train()
    assert loss.grad_fn is None and not loss.requires_grad and loss.ndim == 0
    assert all(p.grad is not None for p in model.parameters())


def test_model_step_reports_a_failed_capture(monkeypatch, capsys):
    from bench import model_bench
    from bench.model import LlamaLike, make_batch
    from bench.progress import Steps
    torch.manual_seed(0)
    model = LlamaLike(vocab=40, width=32, heads=4, kv_heads=2, hidden=48, layers=1)
    calls = []

    def capture(fn):  # aten and swap_linears capture; use_tritonmm's capture fails
        calls.append(fn)
        if len(calls) == 3:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing\nmore lines")
        return fn

    monkeypatch.setattr(model_bench, "capture", capture)
    monkeypatch.setattr(model_bench, "wall_ms", lambda fn, budget_s=None: (fn(), 2.0)[1])
    monkeypatch.setattr(model_bench, "make_inputs",
                        lambda step, m, vocab: make_batch(2, 5, vocab, "cpu", torch.Generator().manual_seed(1)))
    variants = {name: (model, contextlib.nullcontext) for name in model_bench.VARIANTS}
    eager, graph = model_bench.measure_step("train", variants, 1, Steps(4, "train"))
    assert set(eager["ms"]) == set(model_bench.VARIANTS) and eager["not_captured"] == {} and eager["note"] == ""
    assert set(graph["ms"]) == {"aten", "swap_linears"}
    why = "RuntimeError: CUDA error: operation not permitted when stream is capturing"
    assert graph["not_captured"] == {"use_tritonmm": why}
    assert graph["note"] == f"use_tritonmm not captured: {why}"
    assert "use_tritonmm not captured in a CUDA graph" in capsys.readouterr().err  # the traceback, on stderr
    assert f"not captured: {why}" in model_bench.table([eager, graph]).splitlines()[-1]
    assert eager["rel_diff"] == {"swap_linears": 0.0, "use_tritonmm": 0.0}


@pytest.mark.gpu
@pytest.mark.parametrize("step", ["train", "prefill", "decode"])
def test_gpu_model_step_times_every_variant(step, monkeypatch):
    from bench import model_bench
    from bench.progress import Steps
    monkeypatch.setattr(model_bench, "TRAIN", (2, 64))
    monkeypatch.setattr(model_bench, "PREFILL", (2, 64))
    monkeypatch.setattr(model_bench, "DECODE", (4, 1))
    monkeypatch.setattr(model_bench, "PAST", 32)
    small = dict(vocab=256, width=128, heads=4, kv_heads=2, hidden=256)
    eager, graph = model_bench.measure_step(step, model_bench.models(torch.bfloat16, small, 1), 1, Steps(4, step))
    assert (eager["kind"], graph["kind"]) == ("eager", "graph")
    # Every variant captured, aten's above all: a failed capture names itself here, not as a missing number.
    assert "aten" not in graph["not_captured"], graph["not_captured"]
    assert graph["not_captured"] == {} and graph["note"] == "", graph["not_captured"]
    for row in (eager, graph):
        assert set(row["ms"]) == set(model_bench.VARIANTS) and all(ms > 0 for ms in row["ms"].values()), row
    assert all(d < 3e-2 for d in eager["rel_diff"].values()), eager["rel_diff"]


# ---- --preset model --compile: compiled rows --------------------------------------------------------------

def test_model_compile_flag(capsys):
    from bench import model_bench
    from bench.__main__ import parser
    p = parser()
    assert p.parse_args(["--preset", "model"]).compile is None
    assert p.parse_args(["--preset", "model", "--compile", "--rounds", "3"]).compile == "train,prefill"
    assert p.parse_args(["--preset", "model", "--compile", "decode, train"]).compile == "train,decode"  # STEPS' order
    assert p.parse_args(["--preset", "model", "--compile", "all"]).compile == ",".join(model_bench.STEPS)
    for args, message in ((["--preset", "model", "--compile", "prefil"], "argument --compile: takes steps of"),
                          (["--preset", "model", "--compile", ","], "argument --compile: takes steps of"),
                          (["--compile"], "use it with --preset model"),
                          (["--preset", "sweep", "--compile"], "use it with --preset model")):
        code, _, err = bench_main(capsys, *args)
        assert code == 2 and message in err, (args, err[-500:])
    if not HAS_GPU:  # named among what the CPU run could not honour
        code, out, _ = bench_main(capsys, "--preset", "model", "--compile")
        assert code == 3 and "Not honoured without a GPU: --preset model, --compile train,prefill." in out


def test_model_kernel_kind_of_sample_names():
    from bench.model_bench import gemm_kernels, kernel_kind
    cublas = ["nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT",
              "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
              "kernel__5x_cublas",
              "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x3_tn",
              "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>"
              "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
              "void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, 128, 16, 4, 4, false, false>()",
              "void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false>()",
              "void gemmk1_kernel<int, float, 256, 5, false, false, false, false, false>()",
              "triton_tem_fused_mm_0"]
    ours = ["gemm_kernel", "gemm_tma_kernel", "gemv_kernel", "split_k_reduce_kernel", "copy_kernel", "gluon_gemm_kernel"]
    neither = ["void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
               "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false>()",
               "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, "
               "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true>(pytorch_flash::Flash_bwd_params)",
               "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t,"
               " cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)",
               "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0",
               "triton_poi_fused_addmm_gelu_0", "triton_red_fused__to_copy_mean_pow_rsqrt_1",
               "triton_per_fused_nll_loss_forward_2",
               "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
               "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
               "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, "
               "long>()"]
    assert [kernel_kind(n) for n in cublas] == ["gemm"] * len(cublas)
    assert [kernel_kind(n) for n in ours] == ["tritonmm"] * len(ours)
    assert [kernel_kind(n) for n in neither] == [None] * len(neither)
    counts = gemm_kernels(ours + [cublas[0]] * 2 + neither + ["gemm_kernel"])
    assert counts == dict(other=2, tritonmm=7, other_names=[cublas[0]])


def _tiny_variants(device):
    """The three variants of a tiny float32 LlamaLike on device. Its tensors must be where tritonmm runs them:
    on the CPU only in Triton's interpreter (conftest sets TRITON_INTERPRET=1 where there is no GPU), so on a
    machine with a GPU they are CUDA tensors; there tritonmm's validation refuses CPU tensors (ValueError "x is
    on the CPU"), and under torch.compile dynamo reports that as "Unsupported: Observed exception"."""
    from bench import model_bench
    from bench.model import LlamaLike
    torch.manual_seed(0)
    base = LlamaLike(vocab=40, width=32, heads=4, kv_heads=2, hidden=48, layers=1).to(device)
    return {"aten": (base, contextlib.nullcontext),
            "swap_linears": (model_bench.swapped_copy(base), contextlib.nullcontext),
            "use_tritonmm": (base, tritonmm.use_tritonmm)}


def _small_inputs(monkeypatch, device):
    from bench import model_bench
    from bench.model import make_batch

    def make_inputs(step, model, vocab):
        idx, targets = make_batch(2, 5, vocab, device, torch.Generator().manual_seed(1))
        return (idx, targets) if step == "train" else (idx, None)
    monkeypatch.setattr(model_bench, "make_inputs", make_inputs)
    monkeypatch.setattr(model_bench, "wall_ms", lambda fn, budget_s=None: (fn(), 2.0)[1])


def _kernels_of_each_variant(row, device, step, variants):
    """The GEMM launches of variants' profiled calls: none on a CPU (no device kernels); on a GPU aten's compiled
    step ran other libraries' GEMMs and none of tritonmm's, and each tritonmm variant ran a tritonmm kernel or
    more for each of the tiny model's 8 products (training: with their 2 backward products each)."""
    if device == "cpu":
        assert row["kernels"] == {name: [0, 0] for name in variants}, row["kernels"]
        return
    assert set(row["kernels"]) == set(variants), row["kernels"]
    other, ours = row["kernels"]["aten"]
    assert other > 0 and ours == 0, row["kernels"]
    for name in set(variants) - {"aten"}:
        assert row["kernels"][name][1] >= 8 * (3 if step == "train" else 1), (name, row["kernels"])


def test_model_compiled_row(monkeypatch, device):
    """The compiled training step of each variant (aot_eager: inductor's pass does not run but the override
    does): each compiles exactly once, under its own tritonmm setting (aten's and swap_linears' with tritonmm off,
    use_tritonmm's inside the switch), so no graph is shared across variants (aten's and use_tritonmm's compile
    the same model on the same inputs) and no call after the warm-up recompiles; losses and gradients agree with
    aten's compiled step."""
    from bench import model_bench
    from bench.progress import Steps
    _small_inputs(monkeypatch, device)
    compiled_with_tritonmm = []  # tritonmm's switch at each graph's compile, in the order they compiled

    def backend(gm, example_inputs):
        compiled_with_tritonmm.append(tritonmm.override.enabled())
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    row = model_bench.measure_compiled("train", _tiny_variants(device), 2, Steps(5, "compiled"), backend=backend)
    assert row["not_compiled"] == {} and row["not_profiled"] == {} and row["note"] == "", row["note"]
    # One graph per variant, in the variants' order, each under its setting: none reused across variants,
    # none recompiled in the rounds.
    assert compiled_with_tritonmm == [False, False, True]
    assert row["kind"] == "compiled" and row["ms"] == {name: 2.0 for name in model_bench.VARIANTS}
    assert set(row["rel_diff"]) == set(row["grad_diff"]) == {"swap_linears", "use_tritonmm"}
    assert all(d < 1e-4 for d in [*row["rel_diff"].values(), *row["grad_diff"].values()]), row
    _kernels_of_each_variant(row, device, "train", model_bench.VARIANTS)
    lines = model_bench.table([row]).splitlines()
    assert "GEMM kernels other/tritonmm: aten | swap | use" in lines[0] and "grad rel diff swap / use" in lines[0]
    cells = " | ".join("/".join(map(str, row["kernels"][name])) for name in model_bench.VARIANTS)
    assert " compiled " in lines[2] and "2.00 (x1.00)" in lines[2] and cells in lines[2]


def test_model_compiled_row_reports_a_failed_compile(monkeypatch, capsys, device):
    from bench import model_bench
    from bench.progress import Steps
    _small_inputs(monkeypatch, device)
    real = model_bench.compiled_step_fn

    def compiled_step_fn(step, model, inputs, name, backend="inductor"):
        fn = real(step, model, inputs, name, "aot_eager")
        if name.endswith("use_tritonmm"):
            def fails():
                raise RuntimeError("InductorError: the pass broke\nmore lines")
            return fails
        return fn
    monkeypatch.setattr(model_bench, "compiled_step_fn", compiled_step_fn)
    row = model_bench.measure_compiled("prefill", _tiny_variants(device), 1, Steps(5, "compiled"))
    why = "RuntimeError: InductorError: the pass broke"
    assert row["not_compiled"] == {"use_tritonmm": why} and row["note"] == f"use_tritonmm not compiled: {why}"
    assert set(row["ms"]) == set(row["kernels"]) == {"aten", "swap_linears"} and row["grad_diff"] == {}
    assert set(row["rel_diff"]) == {"swap_linears"} and row["rel_diff"]["swap_linears"] < 1e-4
    _kernels_of_each_variant(row, device, "prefill", ("aten", "swap_linears"))
    assert "use_tritonmm not compiled (prefill)" in capsys.readouterr().err  # the traceback, on stderr
    eager = dict(step="prefill", kind="eager", ms={"aten": 1.0}, rel_diff={}, note="")
    lines = model_bench.table([eager, row]).splitlines()
    cells = " | ".join("/".join(map(str, row["kernels"][name])) for name in ("aten", "swap_linears"))
    assert f"not compiled: {why}" in lines[-1] and f"{cells} | -" in lines[-1]
    assert lines[2].rstrip().endswith(" -")  # the eager row: its compile-only cells (and its note) empty


@pytest.mark.gpu
@pytest.mark.parametrize("step", ["train", "prefill", "decode"])
def test_gpu_model_compiled_runs_tritonmm_for_every_gemm(step, monkeypatch):
    """Compiled with inductor at small widths: aten's step runs cuBLAS and no tritonmm kernel; use_tritonmm's
    (compiled inside the switch) and swap_linears' run tritonmm's kernels and no cuBLAS GEMM, forward and
    backward; both within bf16's tolerance of aten's compiled step."""
    from bench import model_bench
    from bench.progress import Steps
    monkeypatch.setattr(model_bench, "TRAIN", (2, 64))
    monkeypatch.setattr(model_bench, "PREFILL", (2, 64))
    monkeypatch.setattr(model_bench, "DECODE", (4, 1))
    monkeypatch.setattr(model_bench, "PAST", 32)
    small = dict(vocab=256, width=128, heads=4, kv_heads=2, hidden=256)
    row = model_bench.measure_compiled(step, model_bench.models(torch.bfloat16, small, 1), 1, Steps(5, step))
    assert row["not_compiled"] == {} and row["not_profiled"] == {} and row["note"] == "", row["note"]
    assert set(row["ms"]) == set(model_bench.VARIANTS) and all(ms > 0 for ms in row["ms"].values()), row
    # one layer's 7 Linear layers and the head; training also computes each one's two backward products
    products = 8 * (3 if step == "train" else 1)
    other, ours = row["kernels"]["aten"]
    assert other >= products and ours == 0, row["kernels"]
    for name in ("swap_linears", "use_tritonmm"):
        other, ours = row["kernels"][name]
        assert other == 0, (name, row["other_gemms"][name])
        assert ours >= products, (name, row["kernels"])  # one launch or more for each product
    assert all(d < 3e-2 for d in [*row["rel_diff"].values(), *row["grad_diff"].values()]), row
    assert set(row["grad_diff"]) == ({"swap_linears", "use_tritonmm"} if step == "train" else set())


# ---- --preset first-call (bench/first_call.py) -----------------------------------------------------------

def test_first_call_tuning_cache_is_set_inside_and_restored_after(tmp_path, monkeypatch):
    import os

    from bench import first_call
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "0")
    before = os.environ["TRITONMM_CACHE_DIR"]
    tuning._memory["stale"] = "config"
    with first_call.tuning_cache(tmp_path / "cold", tune=True):
        assert os.environ["TRITONMM_CACHE_DIR"] == str(tmp_path / "cold") and os.environ["TRITONMM_AUTOTUNE"] == "1"
        assert "stale" not in tuning._memory  # nothing remembered from before: a cold start
    assert os.environ["TRITONMM_CACHE_DIR"] == before and os.environ["TRITONMM_AUTOTUNE"] == "0"
    monkeypatch.delenv("TRITONMM_AUTOTUNE")
    with first_call.tuning_cache(tmp_path / "off", tune=False):
        assert os.environ["TRITONMM_AUTOTUNE"] == "0"
    assert "TRITONMM_AUTOTUNE" not in os.environ


def _first_call_row(shape, gain, untuned_us=10.0):
    tuned_us = untuned_us / gain
    return dict(shape=shape, layout="NT", kind="forward", cls="odd", first_s=12.5, compiled_s=3.25, configs=40,
                untuned_first_ms=2.0, torch_us=9.0, untuned_us=untuned_us, tuned_us=tuned_us, tuned_gain=gain,
                untuned_x_torch=9.0 / untuned_us, tuned_x_torch=9.0 / tuned_us, untuned_config="tma 64x64x64 w4 s3",
                tuned_config="tma 128x128x64 w4 s4", rel_err=None)


def test_first_call_table_and_summary():
    from bench import first_call
    rows = [_first_call_row("100x4096x4096", 2.0), _first_call_row("3x(64x64x64)", 0.5)]
    lines = first_call.table(rows).splitlines()
    assert lines[0].split()[:3] == ["shape", "layout", "kind"] and "tuned / untuned" in lines[0]
    assert "12.50" in lines[2] and "3.25" in lines[2] and "2.00" in lines[2] and "tma 128x128x64" in lines[2]
    first, gain, torch_line = first_call.summary(rows)
    assert "median 12.50 s" in first and "kernels compiled (tuning alone): median 3.25 s" in first
    assert gain == "untuned time / tuned time over 2 shapes: geomean 1.00, min 0.50 at 3x(64x64x64) NT"
    assert torch_line == "torch time / tritonmm time: untuned geomean 0.90, tuned geomean 0.90"


@pytest.mark.gpu
def test_gpu_first_call_of_a_shape(tmp_path):
    from bench import first_call
    from bench.progress import Steps
    from bench.sweep import Shape
    row = first_call.measure_shape("bf16", Shape(200, 96, 128, "NT", kind="forward"), 1, tmp_path, Steps(3, "t"))
    assert row["first_s"] > 0 and row["compiled_s"] > 0 and row["configs"] >= 1 and row["untuned_first_ms"] > 0
    assert row["rel_err"] < 1e-2 and row["tuned_gain"] > 0 and row["tuned_x_torch"] > 0
    assert (tmp_path / "tuned" / "tuning.json").exists() and not (tmp_path / "untuned" / "tuning.json").exists()


@pytest.mark.gpu
def test_gpu_quick_run_shows_its_phases(tmp_path):
    out = run_bench("--quick", "--shape", "256x128x64", "--dtype", "fp32", "--impl", "torch.mm", "--impl", "tiled",
                    "--impl", "tritonmm (", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    for line in ("phase compile tritonmm (the CUDA ladder builds meanwhile): ", "phase time the table: ",
                 "[table 5/5, "):
        assert line in out.stderr, line
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert [r["impl"] for r in rows] == ["torch.mm", *(f"cuda tiled T={t}" for t in (8, 16, 32)), impls.UNTUNED]
    assert "Wall time by phase: " in (tmp_path / "RESULTS.md").read_text()


def test_compiled_kernels_report_and_refusals(capsys):
    """bench.compiled_kernels: GEMM and other device time per variant, the GEMM launches side by side,
    the other kernels that differ most; a step it does not know is refused, and without a GPU it says so."""
    from bench import compiled_kernels
    times = {"aten": [("nvjet_sm90_tst_256x128", 613.0), ("triton_poi_fused_mul_silu_2", 222.8)],
             "use_tritonmm": [("gemm_tma_kernel", 641.0), ("triton_poi_fused_mul_2", 221.7)],
             "swap_linears": [("gemm_tma_kernel", 615.0), ("triton_poi_fused_mul_silu_2", 222.0)]}
    text = compiled_kernels.report("prefill", times)
    assert "prefill aten: 2 kernels, 0.84 ms: gemm 0.61 ms, other 0.22 ms" in text
    assert "prefill use_tritonmm: 2 kernels, 0.86 ms: tritonmm 0.64 ms, other 0.22 ms" in text
    assert "   613.0 nvjet_sm90_tst_256x128" in text and "   641.0 gemm_tma_kernel" in text
    assert f"{0:9.1f} {221.7:9.1f} {0:9.1f}  triton_poi_fused_mul_2" in text
    assert compiled_kernels.main(["decoder"]) == 2
    if not torch.cuda.is_available():
        assert compiled_kernels.main([]) == 3
    assert "steps must be among" in capsys.readouterr().err


def test_ab_parses_threshold_changes_and_refuses_bad_ones():
    """bench.ab --set: Thresholds fields converted to their annotated types; a bad name or value is a ValueError
    naming --set (and the fields), the command line's bad sizes a usage error; without a GPU it says so, code 2."""
    from bench import ab
    assert ab.parse_set("gluon_wide_min_macs=inf,gluon_wide_waves=2,pdl=false") == \
        {"gluon_wide_min_macs": float("inf"), "gluon_wide_waves": 2, "pdl": False}
    for bad, words in (("gluon_wide_waves=inf", "not a valid int"), ("gluon_wide_waves=2.5", "not a valid int"),
                       ("pdl=flase", "not a valid bool"), ("nonsense=1", "the fields"),
                       ("gluon_min_macs", "name=value"), ("", "names no threshold")):
        with pytest.raises(ValueError, match=words):
            ab.parse_set(bad)
    with pytest.raises(SystemExit):
        ab.main(["--set", "gluon_wide_waves=1", "--sizes", "2500-1000", "--seed", "1"])
    if not torch.cuda.is_available():
        assert ab.main(["--set", "gluon_wide_waves=1", "--seed", "1"]) == 2


def test_ab_draw_is_seeded_in_range_and_half_aligned():
    import random
    from bench import ab
    first = ab.draw(random.Random(7), 12, 1000, 2500)
    assert first == ab.draw(random.Random(7), 12, 1000, 2500) and first != ab.draw(random.Random(8), 12, 1000, 2500)
    for i, (shape, dtype) in enumerate(first):
        assert all(1000 <= n <= 2500 for n in shape[:3]) and shape.layout in ("NN", "NT") and dtype in ("bf16", "fp16")
        assert shape.kind == "drawn" and (i % 2 or all(n % 8 == 0 for n in shape[:3]))
    assert any(n % 8 for shape, _ in first[1::2] for n in shape[:3])  # the others keep any size
    assert {dtype for _, dtype in ab.draw(random.Random(7), 6, 1000, 2500, ab.KINDS["tf32x3"])} == {"tf32x3"}
    assert [ab._multiple_of_8(x, 1001, 1010) for x in (1001, 1003, 1012)] == [1008, 1008, 1008]  # kept in range
    assert ab._multiple_of_8(1003, 1001, 1006) == 1003  # no multiple of 8 in range: as drawn
    low = type("Low", (), {"randint": lambda self, lo, hi: 3})()  # a draw of 3 rounds to no rows
    assert ab._changed_size(low, 1, 3) == 8
    assert all(n % 8 == 0 and 1000 <= n <= 3504 for n in (ab._changed_size(random.Random(s), 1000, 2500)
                                                          for s in range(40)))


def test_ab_decode_draw_is_seeded_and_in_range():
    """bench.ab --rows: x @ W.T products, M log-uniform in the rows' range, the weight's sizes in --sizes, every
    other weight's N and K multiples of 8; a bad --rows is a usage error."""
    import random
    from bench import ab
    first = ab.draw_rows(random.Random(7), 16, (2, 64), 4096, 14336)
    assert first == ab.draw_rows(random.Random(7), 16, (2, 64), 4096, 14336)
    assert first != ab.draw_rows(random.Random(8), 16, (2, 64), 4096, 14336)
    for i, (shape, dtype) in enumerate(first):
        assert 2 <= shape.M <= 64 and all(4096 <= n <= 14336 for n in (shape.N, shape.K)) and shape.layout == "NT"
        assert dtype in ("bf16", "fp16") and (i % 2 or (shape.N % 8 == 0 and shape.K % 8 == 0))
    assert any(s.M < 16 for s, _ in first) and any(s.M > 16 for s, _ in first)
    for bad in ("64-2", "0-64", "a-b"):
        with pytest.raises(SystemExit):
            ab.main(["--set", "stream_model=false", "--rows", bad, "--seed", "1"])


def test_ab_changed_products_take_k_from_its_range_and_any_size_where_asked(monkeypatch):
    """bench.ab --k LO-HI --unaligned: the changed products' K log-uniform in the range, multiples of 8 unless
    --unaligned, whose M, N and K then take any size (here every product changes plan)."""
    import random
    from bench import ab, sweep
    monkeypatch.setattr(sweep, "operands", lambda shape, dtype: (shape, None))
    monkeypatch.setattr(ab, "_plan", lambda shape, b, changes, dtype, captured: bool(changes))
    aligned = ab.draw_changed(random.Random(5), 24, 1000, 2500, {"pdl": False}, k_range=(32, 256))
    assert all(32 <= s.K <= 256 and s.M % 8 == s.N % 8 == s.K % 8 == 0 for s, _ in aligned)
    assert min(s.K for s, _ in aligned) < 64 and max(s.K for s, _ in aligned) > 128  # spread over the range
    loose = ab.draw_changed(random.Random(5), 24, 64, 1500, {"pdl": False}, any_size=True)
    assert all(256 <= s.K <= 4096 and 64 <= min(s.M, s.N) and max(s.M, s.N) <= 2500 for s, _ in loose)
    assert any(s.K % 8 for s, _ in loose) and any(n % 8 for s, _ in loose for n in (s.M, s.N))
    assert all(s.K % 8 == 0 and 250 <= s.K <= 260 for s, _ in  # inside a narrow range too
               ab.draw_changed(random.Random(5), 6, 1000, 2500, {"pdl": False}, k_range=(250, 260)))
    for bad in (["--k", "256-32"], ["--k", "32-256", "--batched"], ["--unaligned", "--rows", "2-64"],
                ["--k", "256-4096", "--batched"], ["--k", "1-4"], ["--unaligned"]):
        changed = [] if bad == ["--unaligned"] else ["--changed", "4"]
        with pytest.raises(SystemExit):
            ab.main(["--set", "pdl=false", *bad, *changed, "--seed", "1"])


def test_ab_changed_decode_products_are_drawn_as_decode_draws(monkeypatch):
    """bench.ab --rows --changed: products drawn as draw_rows draws them until that many change plan (with --eager,
    an eager call's plan); here a plan that changes from 150 rows in eager calls stands in for the planner."""
    import random
    from bench import ab, sweep
    monkeypatch.setattr(sweep, "operands", lambda shape, dtype: (shape, None))
    monkeypatch.setattr(ab, "_plan", lambda shape, b, changes, dtype, captured: bool(changes) and shape.M >= 150 and
                        not captured)
    assert ab.draw_changed(random.Random(3), 6, 4096, 16896, {"gluon_wide_row_fill": 0.0}, rows=(128, 400),
                           tries=50) == []
    shapes = ab.draw_changed(random.Random(3), 6, 4096, 16896, {"gluon_wide_row_fill": 0.0}, rows=(128, 400),
                             captured=False)
    assert len(shapes) == 6
    for shape, dtype in shapes:
        assert 150 <= shape.M <= 400 and all(4096 <= n <= 16896 for n in (shape.N, shape.K))
        assert shape.layout == "NT" and shape.kind == "changed" and dtype in ("bf16", "fp16")


def test_ab_batched_draw_is_the_sweeps_batched_kind(monkeypatch):
    """bench.ab --batched: batches as the sweep draws them (attention over heads, experts' x @ W.T), seeded, at
    most DRAW_MAX_MACS, of more than one class; --changed draws them too; with --rows it is a usage error."""
    import random
    from bench import ab, sweep
    first = ab.draw_batched(random.Random(7), 16)
    assert first == ab.draw_batched(random.Random(7), 16) and first != ab.draw_batched(random.Random(8), 16)
    assert all(s.Z > 1 and s.macs <= sweep.DRAW_MAX_MACS and s.kind == "drawn" and d in ("bf16", "fp16")
               for s, d in first)
    assert len({sweep.shape_class(s) for s, _ in first}) > 2 and {s.layout for s, _ in first} == {"NN", "NT"}
    monkeypatch.setattr(sweep, "operands", lambda shape, dtype: (shape, None))
    monkeypatch.setattr(ab, "_plan", lambda shape, b, changes, dtype, captured: bool(changes) and shape.N < 200)
    changed = ab.draw_changed(random.Random(3), 4, 1000, 2500, {"batch_slice_min_fill": 1.0}, batched=True)
    assert len(changed) == 4 and all(s.Z > 1 and s.N < 200 and s.kind == "changed" for s, _ in changed)
    with pytest.raises(SystemExit):
        ab.main(["--set", "batch_slice_min_fill=1", "--batched", "--rows", "2-64", "--seed", "1"])


def test_rounds_rotate_the_order_of_the_ways():
    from bench import common
    ways = ["torch", "shipped", "changed"]
    orders = [common.round_order(ways, i) for i in range(3)]
    assert orders[0] == ways and common.round_order(ways, 3) == ways
    assert all(sorted(o) == sorted(ways) for o in orders)
    assert all(sorted(o[place] for o in orders) == sorted(ways) for place in range(3))  # each way once in each place


def test_ab_summary_compares_both_ways_per_group():
    from bench import ab
    rows = [dict(kind="drawn", shape="1000x1000x1000", us=dict(torch=10.0, shipped=10.0, changed=20.0)),
            dict(kind="drawn", shape="1001x1000x1000", us=dict(torch=10.0, shipped=5.0, changed=5.0)),
            dict(kind="changed", shape="2048x2048x1024", us=dict(torch=10.0, shipped=12.5, changed=10.0)),
            dict(kind="drawn", shape="32x(2350x80x2350)", us=dict(torch=10.0, shipped=10.0, changed=10.0)),
            dict(kind="drawn", shape="8x(4096x128x4096)", us=dict(torch=10.0, shipped=20.0, changed=10.0))]
    lines = ab.summary(rows[:3])
    assert lines[0].startswith("drawn (2): x torch.mm shipped 1.414 (min 1.000), changed 1.000 (min 0.500)")
    assert lines[0].endswith("shipped ahead on 1")
    assert lines[1].startswith("drawn, sizes multiples of 8 (1): x torch.mm shipped 1.000")
    assert lines[2].startswith("changed (1): x torch.mm shipped 0.800 (min 0.800), changed 1.000")
    batches = ab.summary(rows[3:])  # a batch's sizes from its text, Zx(MxNxK)
    assert batches[1].startswith("drawn, sizes multiples of 8 (1): x torch.bmm shipped 0.500")


def test_ab_summary_gives_the_read_share_of_decode_draws():
    from bench import ab
    share = dict(torch=0.8, shipped=0.6, changed=0.4)
    rows = [dict(kind="drawn", shape=f"{m}x4096x{k}", us=dict(torch=10.0, shipped=10.0, changed=10.0),
                 read_share={w: v + m / 1000 for w, v in share.items()})
            for m, k in ((16, 4096), (33, 4096), (48, 4099))]
    lines = ab.summary(rows)
    assert lines[1].strip().startswith("share of the read bandwidth") and "torch 83% (82%)" in lines[1]
    assert "shipped 63% (62%)" in lines[1] and "changed 43% (42%)" in lines[1]
    # The aligned group of a decode draw asks K alone (M, the tokens, aligns no row of x @ W.T but C's, N long).
    assert lines[2].startswith("drawn, weight rows 16-byte aligned (2):")


def test_stream_names_configs_as_its_file_does_and_refuses_bad_rows():
    """bench.stream: its config names are those of bench/results/stream/'s JSON (the cost-model test reads them
    back); it times the stream model's candidates at both heights beside the tuner's; --rows outside 2-1024 and
    --weights not NxK pairs are usage errors; without a GPU it says so, code 2."""
    from bench import stream
    from tritonmm import config_space
    assert stream.config_text(config_space.make_config(64, 128, 64, 6, 4, SPLIT_K=3)) == "64x128x64 w4 s6 split-K 3"
    assert stream.config_text(config_space.make_config(16, 64, 256, 5, 4)) == "16x64x256 w4 s5"
    for bad in ("1,16", "1025", "x"):
        with pytest.raises(SystemExit):
            stream.main(["--rows", bad])
    for bad in ("4096", "4096x0", "ax4096", "4096x4096x2"):
        with pytest.raises(SystemExit):
            stream.main(["--rows", "16", "--weights", bad])
    if not torch.cuda.is_available():
        assert stream.main(["--rows", "16"]) == 2
