"""The scaling preset's verdicts on the tiling write-ups' claims, from made-up measurements (no GPU)."""
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HAS_GPU

from bench import scaling

UPPER = ["cuda blocktile_2d", "cuda double_buffer 2blk/SM"]
LADDER = ["cuda naive", "cuda coalesced", "cuda tiled T=16", "cuda tiled T=32", *UPPER]


def fake(times: dict, skipped=(), odd_err=1e-7) -> dict:
    """A measure()-shaped dict: times {impl: {n: ms}}; skipped: (impl, n) cells over the cap."""
    sizes = sorted({n for by in times.values() for n in by} | {n for _, n in skipped})
    cells = [dict(impl=i, n=n, ms=t, est_s=None, rel_err=1e-7, note=None)
             for i, by in times.items() for n, t in by.items()]
    cells += [dict(impl=i, n=n, ms=None, est_s=9.0, rel_err=None, note="skipped: ~9.0 s/call > 3 s cap")
              for i, n in skipped]
    odd = [dict(impl=i, n=n, rel_err=odd_err) for i in LADDER for n in scaling.ODD]
    return dict(sizes=sizes, cap_s=3.0, rounds=1, ladder=LADDER, cells=cells, odd=odd,
                tiles={"cuda blocktile_2d": "128x128", "cuda double_buffer 2blk/SM": "128x128"}, smem_per_sm=233472)


def cubic(ms_at_1024: float, sizes=scaling.SIZES) -> dict:
    return {n: ms_at_1024 * (n / 1024) ** 3 for n in sizes}


def by_number(rows):
    return {r["#"]: r for r in rows}


def test_compare_bands():
    assert scaling.compare(1.6, 1.6) == scaling.compare(1.6, 2.3) == "holds"
    assert scaling.compare(1.6, 3.0) == "direction only"  # faster, but not by their margin
    assert scaling.compare(1.6, 0.8) == "does not hold"
    assert scaling.compare(4.0, None) == "not measured"


def test_estimate_is_cubic():
    assert scaling.estimate_s(None, 2048) is None
    assert scaling.estimate_s((1024, 10.0), 2048) == pytest.approx(0.08)


def test_verdicts_from_fake_measurements():
    times = {"cuda naive": cubic(1.0), "cuda coalesced": cubic(0.8), "cuda tiled T=16": cubic(0.5),
             "cuda tiled T=32": {**cubic(0.5), 2048: 4.0, 16384: 0.5 * 16 ** 3 / 1.2},
             "cuda blocktile_2d": cubic(0.1), "cuda double_buffer 2blk/SM": cubic(0.06), "torch.mm": cubic(0.05)}
    rows = by_number(scaling.verdicts(fake(times)))
    assert len(rows) == len(scaling.CLAIMS) == 8
    # claim 4: naive / best classic tiled at 8192 = 1.0 / 0.5 = x2.0, within 1.5x of their x1.63
    assert rows[4]["holds?"] == "holds" and "8192^2" in rows[4]["measured here"]
    # claim 5: tiled / torch.mm at 2048 = 4.0 / (0.05 * 8) = x10 from T=16 (0.5 * 8 = 4.0 too): within 1.5x of 7.5
    assert rows[5]["holds?"] == "holds"
    # claim 6: coalesced / T=32 at 16384 = 0.8 / (0.5 / 1.2) = x1.92: holds (their x1.58)
    assert rows[6]["holds?"] == "holds" and "x1.92" in rows[6]["measured here"]
    # claim 7: speedup x1.6 at 2048 (0.8 * 8 / 4.0), x1.92 at 16384: grows x1.2, not their x4
    assert rows[7]["holds?"] == "direction only" and "x1.20" in rows[7]["measured here"]
    assert rows[8]["holds?"].startswith("not here") and "6 rungs correct at N = 1000, 1025" in rows[8]["measured here"]
    assert rows[3]["holds?"] == "does not hold" and "228 KB" in rows[3]["measured here"]  # best rung x8.3 a tiled one
    assert rows[1]["holds?"] == "not measured" and "--traffic" in rows[1]["measured here"]


def test_verdicts_fall_back_to_the_largest_common_size_when_capped():
    times = {"cuda naive": cubic(1.0, (1024, 2048, 4096)), "cuda coalesced": cubic(0.8, (1024, 2048, 4096, 8192)),
             "cuda tiled T=16": cubic(0.5), "cuda tiled T=32": cubic(0.5), "torch.mm": cubic(0.05)}
    meas = fake(times, skipped=[("cuda naive", 8192), ("cuda naive", 16384), ("cuda coalesced", 16384)], odd_err=0.3)
    rows = by_number(scaling.verdicts(meas))
    assert "4096^2 (not 8192^2: capped)" in rows[4]["measured here"]
    assert "8192^2 (not 16384^2: capped)" in rows[6]["measured here"]
    assert rows[7]["holds?"] == "does not hold"  # the speedup stays flat: x1.0 growth against their x4
    assert rows[8]["holds?"] == "holds here" and "wrong: cuda blocktile_2d at 1000" in rows[8]["measured here"]
    assert rows[3]["holds?"] == "not measured"  # no rung above the tiled kernels was timed
    table = scaling.scaling_table(meas)
    assert "skipped: ~9.0 s/call > 3 s cap" in table and "(x1.60)" in table


def test_claim_1_from_traffic_rows():
    def row(impl, tile, l2, dram, n=1024):
        model = 2 * n ** 3 // tile * 4
        return dict(dtype="fp32", M=n, N=n, K=n, impl=impl, shape=f"{n}x{n}x{n}", model_read_bytes=model,
                    l2_x_model=l2, dram_x_model=dram, dram_read_bytes=dram * model)
    traffic_rows = [row("cuda naive", 1, 0.3, 0.01), row("cuda tiled T=16", 16, 1.0, 0.15),
                    row("cuda tiled T=32", 32, 1.1, 0.3), row("cuda coalesced", 1, 0.3, 0.01, n=4096),
                    row("cuda tiled T=32", 32, 1.0, 0.5, n=4096)]
    timed = fake({"cuda tiled T=32": cubic(0.5), "cuda coalesced": cubic(0.8)})
    rows = by_number(scaling.verdicts(timed, traffic_rows))
    assert rows[1]["measured here"].startswith("N=1024: L2 reads by the SMs / model: naive 0.30")  # no L1 data
    assert rows[1]["holds?"] == "does not hold"  # the naive kernel's L2 reads are 0.3x the model's 2N^3
    traffic_rows[0].update(l2_x_model=0.9)
    verdict = by_number(scaling.verdicts(fake({}), traffic_rows))[1]["holds?"]
    assert verdict.startswith("holds for L2 reads by the SMs; not for HBM")
    for r in traffic_rows:
        r["l1_x_model"] = 1.0
    verdict = by_number(scaling.verdicts(fake({}), traffic_rows))[1]["holds?"]
    assert verdict.startswith("holds for loads issued (L1 requests) and L2 reads by the SMs; not for HBM reads")
    # claim 6's memory half from the largest profiled shape
    six = by_number(scaling.verdicts(timed, traffic_rows))[6]
    assert "HBM reads" in six["measured here"] and "4096x4096x4096" in six["measured here"]


def test_claims_table_and_chart(tmp_path):
    times = {name: cubic(ms) for name, ms in (("cuda naive", 1.0), ("cuda coalesced", 0.8), ("cuda tiled T=16", 0.5),
                                              ("cuda tiled T=32", 0.45), ("cuda blocktile_2d", 0.1),
                                              ("cuda double_buffer 2blk/SM", 0.06), ("torch.mm", 0.05))}
    meas = fake(times)
    rows = scaling.verdicts(meas)
    text = scaling.claims_table(rows)
    assert text.startswith("| #") and "| holds?" in text and text.count("\n") == len(rows) + 1
    paths = scaling.write_scaling(meas, rows, dict(gpu="Test GPU"), tmp_path)
    assert (tmp_path / "scaling.png").stat().st_size > 10_000 and tmp_path / "claims.md" in paths
    assert json.loads((tmp_path / "scaling.json").read_text())["claims"][0]["#"] == 1
    page = (tmp_path / "RESULTS.md").read_text()
    assert tmp_path / "RESULTS.md" in paths and page.startswith("# Benchmark results: Test GPU")
    assert "## The claims" in page and "| holds?" in page and "![scaling](scaling.png)" in page


def test_report_imports_nothing_of_scaling():
    # scaling.py builds on report.py, never the other way round: no import circle between them
    from bench import report
    tree = ast.parse(Path(report.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any("scaling" in name for name in imported)


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_scaling_without_a_gpu_says_so_and_exits_3():
    out = subprocess.run([sys.executable, "-m", "bench", "--preset", "scaling"], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ))
    assert out.returncode == 3, out.stderr[-2000:]
    assert out.stdout.startswith("No CUDA GPU found") and "Not honoured without a GPU: --preset scaling" in out.stdout
    assert "Nothing asked for ran: --preset scaling" in out.stderr
