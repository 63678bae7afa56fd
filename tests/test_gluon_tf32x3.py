"""The Gluon tf32x3 kernel (tritonmm/kernels/gluon_tf32x3.py): its compile to sm_90a without a GPU (Triton >= 3.8),
the planner's rule on the CPU, and on a Hopper GPU its results against float64, through the kernel and the planner."""
import json

import pytest
import torch
from conftest import every_product_on_the_tma_kernel, rel_err
from test_gluon import HAS_GLUON, _run_python, _skip_unless_available

from tritonmm import device, rules, staging, thresholds
from tritonmm.kernels import gluon_gemm, gluon_tf32x3

BOUND = 1e-5  # test_precision.py's for tf32x3: float32's accuracy


def test_shared_memory_budget_gives_three_stages():
    """A slot is four float32 tiles (A's and B's high parts and remainders, 64 KiB); three fit beside C's staging."""
    assert gluon_tf32x3.stages() == 3


@pytest.mark.skipif(not HAS_GLUON, reason="the Gluon kernels need Triton >= 3.8")
def test_compiles_for_sm90a_without_a_gpu(tmp_path):
    """Through ptxas for sm_90a: within 227 KiB of shared memory, nothing spilled, the loader down to 24 registers and
    the consumers up to 232, and three TF32 wgmma a K step for each of the two consumers (4 instructions of K 8
    each)."""
    result = _run_python("""
        import json
        from tritonmm.kernels import gluon_build
        kernel = gluon_build.compile_sm90("tf32x3")
        ptx = kernel.asm["ptx"]
        print("REPORT" + json.dumps(dict(gluon_build.resources(kernel), sm90a=".target sm_90a" in ptx,
                                         wgmma=ptx.count("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"))))
    """, TRITON_CACHE_DIR=str(tmp_path))
    assert result.returncode == 0, result.stderr[-5000:]
    r = json.loads(result.stdout.split("REPORT", 1)[1])
    assert r["sm90a"] and r["shared"] <= gluon_gemm.SMEM_BYTES, r
    assert r["spill_stores"] == r["spill_loads"] == r["stack"] == 0, r
    assert 24 in r["setmaxnreg"] and 232 in r["setmaxnreg"], r
    assert r["wgmma"] == 2 * 3 * gluon_tf32x3.BLOCK_K // 8, r


def _takes(c, bias=None, activation="none", batched=False):
    facts = device.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
    return rules.gluon_tf32x3(facts, c, bias, activation, batched)


def test_rule_takes_plain_products_whose_c_tma_stores(monkeypatch):
    """rules.gluon_tf32x3 (design.md: gluon-tf32x3): plain, unbatched, float32 C with rows TMA stores, where the
    kernel runs, while the threshold is on."""
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    c = torch.empty(64, 72)
    assert _takes(c) and _takes(c[:, :68])  # padded rows ending on a 16-byte boundary
    assert not _takes(c[:, :66])  # C's rows end inside a 16-byte chunk
    assert not _takes(c, bias=torch.empty(72)) and not _takes(c, activation="gelu") and not _takes(c, batched=True)
    assert not _takes(c.to(torch.bfloat16)) and not _takes(c.T)
    with thresholds.override(gluon_tf32x3=False):
        assert not _takes(c)
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert not _takes(c)


def test_planner_sends_split_tf32x3_products_to_it(monkeypatch, device):
    """On a (stand-in) Hopper with every bar of the TMA path lowered, a tf32x3 product splits its operands and
    planner.chosen names the Gluon kernel on staged (split) operands; a TF32 product, and the tf32x3 one with the
    threshold off, do not take it."""
    from tritonmm.planner import chosen
    if device != "cpu":
        _skip_unless_available()
    every_product_on_the_tma_kernel(monkeypatch, device)
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    a, b = torch.randn(40, 24, device=device), torch.randn(24, 36, device=device)
    cfg, path = chosen(a, b, "tf32x3")
    assert path == "gluon+staged" and (cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"]) == (128, 128)
    assert not chosen(a, b, "tf32")[1].startswith("gluon")
    with thresholds.override(gluon_tf32x3=False):
        assert not chosen(a, b, "tf32x3")[1].startswith("gluon")


# --- on a Hopper GPU ------------------------------------------------------------------------------------------

SHAPES = [(1, 4, 4), (130, 264, 520), (1000, 1000, 1000), (2047, 3000, 1032), (300, 8, 4100), (4099, 260, 8),
          (777, 1236, 333)]  # M x N x K: edges inside tiles, K not a multiple of the K step, N of the C box


@pytest.mark.gpu
@pytest.mark.parametrize("pingpong", [False, True], ids=["shipped", "turns"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gpu_matches_float64(shape, pingpong):
    """Into an out filled with NaN (every element written), at float32's accuracy; a second run gives the same bits
    (a differing rerun would be a race on the ring or the turns)."""
    _skip_unless_available()
    M, N, K = shape
    torch.manual_seed(M + N + K)
    a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
    out = torch.full((M, N), float("nan"), device="cuda")
    split = staging.split_a(a), staging.split_b(b)
    assert gluon_tf32x3.run(*split, out, pingpong)[0] is out
    first = out.clone()
    gluon_tf32x3.run(*split, out.fill_(float("nan")), pingpong)
    assert rel_err(out, a, b) < BOUND and torch.equal(first, out)


def _runs(monkeypatch) -> list:
    """The arguments of each launch of the kernel through Triton (not a relaunch) from now on."""
    calls, real = [], gluon_tf32x3.run
    monkeypatch.setattr(gluon_tf32x3, "run", lambda *args: calls.append(args) or real(*args))
    return calls


@pytest.mark.gpu
def test_gpu_planner_runs_it_relaunches_and_captures(monkeypatch):
    """tritonmm.mm in tf32x3 with the TMA path's bars lowered (the split's included): the planner launches the Gluon
    kernel on split copies; later calls relaunch it from the cache, splitting each call's fresh values; a CUDA graph
    captures it and replays right. A product with a bias, or whose C rows end inside a 16-byte chunk, stays on the
    tl kernel."""
    _skip_unless_available()
    import tritonmm
    every_product_on_the_tma_kernel(monkeypatch, "cuda")
    calls = _runs(monkeypatch)
    torch.manual_seed(17)
    M, N, K = 1000, 1028, 777
    a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
    for step in range(3):
        a.normal_()  # each relaunch splits this call's values of both
        b.normal_()
        out = torch.full((M, N), float("nan"), device="cuda")
        assert tritonmm.mm(a, b, out=out, input_precision="tf32x3") is out and rel_err(out, a, b) < BOUND
        assert len(calls) == 1 and calls[0][0] is not a  # launched once, on A's split copy
    graph_out = torch.full((M, N), float("nan"), device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tritonmm.mm(a, b, out=graph_out, input_precision="tf32x3")
    a.normal_()
    b.normal_()
    graph.replay()
    assert rel_err(graph_out, a, b) < BOUND and len(calls) == 2
    w, bias = torch.randn(N, K, device="cuda"), torch.randn(N, device="cuda")
    y = tritonmm.linear(a, w, bias, input_precision="tf32x3")
    assert len(calls) == 2 and rel_err(y - bias, a, w.T) < BOUND
    odd = torch.randn(K, N - 2, device="cuda")
    assert rel_err(tritonmm.mm(a, odd, input_precision="tf32x3"), a, odd) < BOUND and len(calls) == 2


def test_device_check_says_why_it_cannot_run(monkeypatch, capsys):
    """bench.gluon_tf32x3 where the kernel cannot run (Triton < 3.8, no Hopper): exit 2 and the reason, no traceback."""
    from bench import gluon_tf32x3 as check
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6.0 is installed"))
    assert check.main(["--rounds", "1"]) == 2
    assert "cannot run the Gluon tf32x3 kernel: Triton 3.6.0 is installed" in capsys.readouterr().err


def test_the_planner_and_the_launcher_name_the_kernel_alike():
    """rules names the schedule without importing the kernels (they import Gluon); launch.gluon dispatches on NAME."""
    assert rules.GLUON_TF32X3_SCHEDULE == gluon_tf32x3.NAME
