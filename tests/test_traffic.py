"""Measured traffic (python -m bench --traffic): ncu's raw CSV parsed, split per implementation, set
beside the bytes model, tabled and plotted, all without a GPU. The synthetic CSV is hand-written in
ncu's format; the recorded one is a real run's output, dropped into tests/data by whoever has a GPU."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HAS_GPU

from bench import ncu, report, traffic

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "ncu_sample.csv"  # SYNTHETIC: the format, made-up numbers
RECORDED = DATA / "ncu_recorded.csv"  # a real OUT/ncu/<dtype>_<shape>.csv, with its .manifest.json beside it


def test_parse_synthetic_sample_reads_every_kernel_in_launch_order():
    kernels = traffic.parse_ncu_csv(SAMPLE.read_text())
    assert [k["id"] for k in kernels] == list(range(7))
    # a kernel name with commas inside its quotes stays one cell
    name = kernels[2]["kernel"]
    assert name.startswith("void splitKreduce_kernel<32, 16, int") and name.endswith("int *)")
    tiled = kernels[4]["metrics"]
    assert tiled["dram__bytes_read.sum"] == 12_582_912  # thousands separators
    assert tiled["gpu__time_duration.sum"] == pytest.approx(1.2)  # nanoseconds -> ms
    assert "device__attribute_display_name" not in tiled  # columns not asked for (a string here) are left alone
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum" not in kernels[6]["metrics"]  # n/a


def test_parse_synthetic_sample_splits_at_markers_and_sums_per_implementation():
    groups = traffic.split_at_markers(traffic.parse_ncu_csv(SAMPLE.read_text()), traffic.MARKER)
    assert [len(g) for g in groups] == [2, 1, 1]  # cuBLAS launched a GEMM and a split-K reduction
    cublas = traffic.sums(groups[0])
    assert cublas["dram"] == 9_437_184 + 4_194_304 and cublas["l2_sm"] == 631_072
    assert traffic.sums(groups[2])["l1_hit"] is None


def test_collect_synthetic_sample_against_the_model():
    manifest = json.loads(SAMPLE.with_suffix(".manifest.json").read_text())
    rows = {r["impl"]: r for r in ncu.collect(manifest, SAMPLE.read_text())}
    n, word = 1024, 4
    tiled = rows["cuda tiled T=32"]
    assert tiled["model_read_bytes"] == 2 * n ** 3 // 32 * word  # reads only, no output term
    assert tiled["min_read_bytes"] == 2 * n * n * word
    assert tiled["l2_read_bytes"] == 8_388_608 * 32 and tiled["l2_x_model"] == pytest.approx(1.0)
    assert tiled["dram_x_min"] == pytest.approx(1.5) and tiled["l1_hit_pct"] == 0
    tma = rows["tritonmm 64x64x32 tma"]
    # TMA loads skip L1: the SMs' requests come from the srcnode counter, not the L1TEX one
    assert tma["l1_req_bytes"] == 0 and tma["l2_tex_bytes"] == 0 and tma["l2_x_model"] == pytest.approx(1.0)
    cublas = rows["torch.mm"]
    assert cublas["model_read_bytes"] is None and cublas["l2_x_model"] is None and cublas["kernels"] == 2
    assert cublas["l1_hit_pct"] == pytest.approx(100 * 200_000 / 1_131_072)
    failed = rows["tritonmm 32x32x32 tma"]
    assert failed["kernels"] == 0 and failed["note"].startswith("CompilationError")


def test_collect_notes_a_path_other_than_asked_and_a_marker_mismatch():
    manifest = json.loads(SAMPLE.with_suffix(".manifest.json").read_text())
    manifest[3]["path"] = "pointer"  # e.g. no TMA on this GPU
    rows = ncu.collect(manifest, SAMPLE.read_text())
    assert rows[3]["note"] == "asked for the tma kernel, ran pointer" and rows[3]["kernels"] == 1
    with pytest.raises(ncu.ProfileError, match="3 marker kernels"):
        ncu.collect(manifest[:2], SAMPLE.read_text())


def test_units_scaled_and_bad_input():
    assert traffic.to_number("1.5", "Gbyte") == 1.5e9
    assert traffic.to_number("2", "Msector") == 2e6
    assert traffic.to_number("3.25", "msecond") == 3.25 and traffic.to_number("4", "usecond") == pytest.approx(0.004)
    assert traffic.to_number("n/a", "byte") is None
    with pytest.raises(ValueError, match="unknown ncu unit"):
        traffic.to_number("1", "furlong")
    with pytest.raises(ValueError, match="no ncu raw-page table"):
        traffic.parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")
    with pytest.raises(ValueError, match="before the first marker"):
        traffic.split_at_markers([dict(id=0, kernel="gemm", metrics={})], traffic.MARKER)


def test_traffic_table_and_chart(tmp_path):
    manifest = json.loads(SAMPLE.with_suffix(".manifest.json").read_text())
    rows = ncu.collect(manifest, SAMPLE.read_text())
    text = report.traffic_table(rows)
    assert "L2/model" in text and "CompilationError" in text and "cuBLAS" in text and "0.268" in text
    paths = report.write_traffic(rows, dict(gpu="Test GPU", date="today"), tmp_path)
    assert json.loads((tmp_path / "traffic.json").read_text())["rows"][1]["impl"] == "cuda tiled T=32"
    chart = tmp_path / "traffic_fp32_1024x1024x1024.png"
    assert chart in paths and chart.stat().st_size > 10_000
    page = (tmp_path / "RESULTS.md").read_text()
    assert page.startswith("# Benchmark results: Test GPU") and "## fp32 1024x1024x1024" in page and "L2/model" in page


def test_plan_covers_the_ladder_both_tritonmm_paths_and_cublas():
    groups = ncu.plan_jobs(None, None, None)
    fp32 = next(jobs for dtype, shape, jobs in groups if dtype == "fp32" and shape == (4096,) * 3)
    names = [j["impl"] for j in fp32]
    assert "torch.mm" in names and "cuda naive" in names and "cuda double_buffer 1blk/SM" in names
    for tile in ("32x32x32", "64x64x32", "128x128x32", "128x256x32"):
        assert f"tritonmm {tile} pointer" in names and f"tritonmm {tile} tma" in names
    assert any(d == "bf16" for d, *_ in groups)
    only = ncu.plan_jobs([(256, 256, 256)], ["bf16"], ["tma"])
    assert [(d, s) for d, s, _ in only] == [("bf16", (256, 256, 256))] and all("tma" in j["impl"] for j in only[0][2])
    cmd = ncu.command("ncu", list(traffic.METRICS.values()), Path("spec.json"))
    for flag in ("--cache-control", "--clock-control", "--nvtx-include"):
        assert cmd[cmd.index(flag) + 1] in ("all", "base", f"{traffic.RANGE}/")


FAKE_NCU = """#!{python}
# Stands in for ncu: records its arguments, then answers as ncu would (FAKE_NCU says how).
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_NCU_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
metrics = args[args.index("--metrics") + 1].split(",")
if os.environ["FAKE_NCU"] == "no-permission":
    print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
    sys.exit(1)
if os.environ["FAKE_NCU"] == "old" and "lts__t_sectors_srcnode_gpc_op_read.sum" in metrics:
    print("==ERROR== Failed to find metric lts__t_sectors_srcnode_gpc_op_read.sum")
    sys.exit(1)
spec = json.load(open(args[-1]))
with open(spec["manifest"], "w") as f:
    f.write(open({manifest!r}).read())
print(open({sample!r}).read())
"""


@pytest.mark.parametrize("mode", ["ok", "old", "no-permission"])
def test_profile_with_a_stand_in_ncu(tmp_path, monkeypatch, mode):
    fake = tmp_path / "ncu"
    fake.write_text(FAKE_NCU.format(python=sys.executable, sample=str(SAMPLE),
                                    manifest=str(SAMPLE.with_suffix(".manifest.json"))))
    fake.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_NCU", mode)
    monkeypatch.setenv("FAKE_NCU_LOG", str(log))
    jobs = ncu.jobs_for("fp32", (1024, 1024, 1024), ["tiled T=32"])
    if mode == "no-permission":
        with pytest.raises(PermissionError):
            ncu.profile(str(fake), "fp32", (1024, 1024, 1024), jobs, tmp_path)
        return
    rows = ncu.profile(str(fake), "fp32", (1024, 1024, 1024), jobs, tmp_path)
    assert [r["impl"] for r in rows][:2] == ["torch.mm", "cuda tiled T=32"]  # the (stand-in) manifest's order
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == (2 if mode == "old" else 1)
    assert ("lts__t_sectors_srcnode_gpc_op_read.sum" in calls[-1][calls[-1].index("--metrics") + 1]) == (mode == "ok")
    spec_path = tmp_path / "fp32_1024x1024x1024.spec.json"
    assert calls[-1][-3:] == ["-m", "bench.traffic_child", str(spec_path)]
    assert json.loads(spec_path.read_text())["jobs"][0]["impl"] == "cuda tiled T=32"
    assert (tmp_path / "fp32_1024x1024x1024.csv").read_text().startswith("==SYNTHETIC==")  # kept for the fixture


def test_a_hung_profile_times_out_with_its_children(tmp_path, monkeypatch):
    pid_file = tmp_path / "grandchild.pid"
    script = (f"import subprocess, sys, time; p = subprocess.Popen([sys.executable, '-c', 'import time; "
              f"time.sleep(60)']); open({str(pid_file)!r}, 'w').write(str(p.pid)); time.sleep(60)")
    monkeypatch.setattr(ncu, "TIMEOUT_S", 2)
    with pytest.raises(subprocess.TimeoutExpired):
        ncu._run([sys.executable, "-c", script])
    pid = int(pid_file.read_text())
    for _ in range(50):  # the profiled process (here a grandchild) went with ncu
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the grandchild outlived the timeout")


@pytest.mark.skipif(not RECORDED.exists(), reason="no recorded ncu CSV: copy OUT/ncu/fp32_1024x1024x1024.csv (and its "
                                                  ".manifest.json) from a --traffic run to tests/data/ncu_recorded.*")
def test_parse_recorded_ncu_csv():
    text = RECORDED.read_text()
    kernels = traffic.parse_ncu_csv(text)
    groups = traffic.split_at_markers(kernels, traffic.MARKER)
    assert groups and all(groups), "every implementation launched at least one kernel"
    for k in kernels:
        for key in traffic.REQUIRED:
            assert k["metrics"].get(traffic.METRICS[key], -1) >= 0, (k["kernel"], key)
        assert k["metrics"][traffic.METRICS["time"]] > 0
    manifest = RECORDED.with_suffix(".manifest.json")
    if manifest.exists():
        for row in ncu.collect(json.loads(manifest.read_text()), text):
            if row["kernels"]:
                # the caches start flushed: each input comes from HBM at least once
                assert row["dram_read_bytes"] >= 0.9 * row["min_read_bytes"], row["impl"]
                assert row["l2_read_bytes"] > 0, row["impl"]


def run_bench(*args):
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ))


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_traffic_without_a_gpu_says_so_and_exits_3():
    out = run_bench("--traffic")
    assert out.returncode == 3, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found") and "Not honoured without a GPU: --traffic." in out.stdout
    assert "Nothing asked for ran: --traffic" in out.stderr


def test_traffic_runs_on_its_own():
    assert run_bench("--traffic", "--preset", "square").returncode == 2
    out = run_bench("--traffic", "--dtype", "tf32")
    assert out.returncode == 2 and "fp32 (IEEE), fp16 and bf16" in out.stderr
