"""The Gluon GEMM (tritonmm/kernels/gluon_gemm.py): its version gate and argument checks on the CPU, its
compile to sm_90a without a GPU (Triton >= 3.8), and its results against float64 on a Hopper GPU."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from conftest import rel_err

from tritonmm.kernels import gluon_gemm

ROOT = Path(__file__).resolve().parents[1]
BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2}  # test_ops.py's per-dtype bounds
HAS_GLUON = gluon_gemm._MISSING is None


def _run_python(code: str, timeout: int = 600, **env_vars) -> subprocess.CompletedProcess:
    """code in a fresh interpreter at the repository root, TRITON_INTERPRET unset (conftest sets it for this
    process on a machine without a GPU, and Triton reads it once, at import)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | env_vars
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_older_triton_is_refused_with_a_reason():
    """Under Triton 3.6 or 3.7 the module imports (nothing of Gluon), available() says why not, and matmul
    still checks its arguments before it refuses."""
    result = _run_python("""
        import sys, torch, triton
        triton.__version__ = "3.7.1"
        from tritonmm.kernels import gluon_build, gluon_gemm
        ok, reason = gluon_gemm.available()
        assert not ok and "3.7.1" in reason and "3.8" in reason, reason
        assert "triton.experimental.gluon" not in sys.modules  # the gate comes before any import of Gluon
        for call, error, words in [
                (lambda: gluon_gemm.matmul(torch.ones(4, 8), torch.ones(8, 8)), TypeError, "torch.bfloat16"),
                (lambda: gluon_gemm.matmul(torch.ones(4, 12, dtype=torch.bfloat16), torch.ones(12, 8,
                                           dtype=torch.bfloat16)), ValueError, "K = 12"),
                (gluon_build.compile_sm90, RuntimeError, "3.8")]:
            try:
                call()
                raise AssertionError("no error")
            except error as e:
                assert words in str(e), e
        print("refused")
    """)
    assert result.returncode == 0 and "refused" in result.stdout, result.stderr[-3000:]


def test_version_parsing():
    from tritonmm.kernels import version
    assert version("3.8.0") == (3, 8) and version("3.10.0rc1") == (3, 10) and version("3.7.1+git1a2b3c") == (3, 7)
    assert version("2.11.0+cu130") == (2, 11)


def test_available_here_says_why_not():
    ok, reason = gluon_gemm.available()
    if not (HAS_GLUON and torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)):
        assert not ok and reason
    else:
        assert ok and reason == ""


def _operands(M, N, K, dtype=torch.bfloat16, layout="NN", device="cpu"):
    """a (M, K) row-major and b (K, N): row-major ("NN") or the transposed view of a row-major (N, K) ("NT")."""
    a = torch.randn(M, K, device=device).to(dtype)
    b = torch.randn(K, N, device=device).to(dtype) if layout == "NN" else torch.randn(N, K, device=device).to(dtype).T
    return a, b


BAD_ARGUMENTS = [
    # (what, a, b, out, error, words the message must hold)
    ("float32", torch.ones(8, 8), torch.ones(8, 8), None, TypeError, ["a is torch.float32", "bfloat16"]),
    ("mixed dtypes", torch.ones(8, 8, dtype=torch.float16), torch.ones(8, 8, dtype=torch.bfloat16), None, TypeError,
     ["b is torch.bfloat16"]),
    ("3-D a, 2-D b", torch.ones(2, 8, 8, dtype=torch.float16), torch.ones(8, 8, dtype=torch.float16), None,
     ValueError, ["b must be 3-D"]),
    ("4-D", torch.ones(2, 2, 8, 8, dtype=torch.float16), torch.ones(8, 8, dtype=torch.float16), None, ValueError,
     ["2-D matrix", "3-D batches"]),
    # batches (gluon_args.check_batched), on the default schedule's 128x256 tiles
    ("entries differ", torch.ones(2, 128, 64, dtype=torch.float16), torch.ones(3, 64, 256, dtype=torch.float16), None,
     ValueError, ["as many entries"]),
    ("entry under a tile", torch.ones(2, 100, 64, dtype=torch.float16), torch.ones(2, 64, 256, dtype=torch.float16),
     None, ValueError, ["at least a tile", "128 x 256", "100 x 256"]),
    ("entries apart", torch.ones(2, 200, 64, dtype=torch.float16)[:, :128], torch.ones(2, 64, 256,
     dtype=torch.float16), None, ValueError, ["a's entries must follow each other", "a.contiguous()"]),
    ("row-major b, K not a step", torch.ones(2, 128, 72, dtype=torch.float16), torch.ones(2, 72, 256,
     dtype=torch.float16), None, ValueError, ["K = 72 is not a multiple of 64", "transposed view"]),
    ("out entries apart", torch.ones(2, 128, 64, dtype=torch.float16), torch.ones(2, 64, 256, dtype=torch.float16),
     torch.empty(2, 200, 256, dtype=torch.float16)[:, :128], ValueError, ["out's entries must follow each other"]),
    ("an entry's rows", torch.ones(2, 128, 64, dtype=torch.float16).mT.contiguous().mT, torch.ones(2, 64, 256,
     dtype=torch.float16), None, ValueError, ["a must be row-major"]),
    ("not a tensor", [[1.0]], torch.ones(8, 8, dtype=torch.float16), None, TypeError, ["a must be a torch.Tensor"]),
    ("inner dims", *_operands(8, 16, 24)[:1], _operands(8, 16, 32)[1], None, ValueError, ["inner dimensions"]),
    ("2047x3001x1035", *_operands(2047, 3001, 1035), None, ValueError, ["K = 1035", "multiple of 8"]),
    ("N not a multiple of 8", *_operands(16, 3001, 1032), None, ValueError, ["N = 3001", "multiple of 8"]),
    ("NT, N not a multiple of 8", *_operands(16, 30, 32, layout="NT"), None, ValueError, ["N = 30"]),
    ("a transposed", _operands(32, 16, 24)[0].T.contiguous().T, _operands(32, 16, 24)[1], None, ValueError,
     ["a must be row-major", "contiguous()"]),
    ("b strided", _operands(16, 16, 32)[0], torch.ones(32, 32, dtype=torch.bfloat16)[:, ::2], None, ValueError,
     ["b must be row-major", "w.T"]),
    ("out shape", *_operands(16, 16, 32), torch.empty(16, 8, dtype=torch.bfloat16), ValueError, ["out must be"]),
    ("out dtype", *_operands(16, 16, 32), torch.empty(16, 16, dtype=torch.float16), ValueError, ["out must be"]),
]


@pytest.mark.parametrize("what,a,b,out,error,words", BAD_ARGUMENTS, ids=[case[0] for case in BAD_ARGUMENTS])
def test_bad_arguments_name_the_argument_and_the_fix(what, a, b, out, error, words):
    with pytest.raises(error) as info:
        gluon_gemm.matmul(a, b, out=out)
    assert all(word in str(info.value) for word in words), str(info.value)


def test_arguments_are_checked_before_any_gpu_work():
    """Valid operands on the CPU pass every check but the device's, and no CUDA context is made on the way."""
    a, b = _operands(130, 264, 520, layout="NT")
    with pytest.raises(ValueError, match="CUDA device"):
        gluon_gemm.matmul(a, b)
    with pytest.raises(ValueError, match="schedule"):
        gluon_gemm.matmul(a, b, schedule="fastest")
    buffer = torch.empty(520 * 264 + 130 * 264, dtype=torch.bfloat16)  # out written over b's last row
    b, out = buffer[:520 * 264].view(520, 264), buffer[519 * 264:649 * 264].view(130, 264)
    with pytest.raises(ValueError, match="overlaps"):
        gluon_gemm.matmul(a, b, out=out)
    if not torch.cuda.is_available():
        assert not torch.cuda.is_initialized()


def test_batches_pass_the_checks_where_entries_stack_or_broadcast():
    """A batch whose entries follow each other, or one operand broadcast (batch stride 0), passes every check but the
    device's; a row-major B of K a multiple of the K step too; so do empty batches and entries, and one entry whose
    batch strides are anything."""
    h = dict(dtype=torch.float16)
    a, w = torch.randn(3, 130, 96).to(**h), torch.randn(3, 264, 96).to(**h)
    for b in (w.mT, w[:1].mT.expand(3, 96, 264), torch.randn(3, 128, 264).to(**h)):
        x = a if b.shape[1] == 96 else torch.randn(3, 130, 128).to(**h)
        with pytest.raises(ValueError, match="CUDA device"):
            gluon_gemm.matmul(x, b, schedule="pingpong")
    with pytest.raises(ValueError, match="CUDA device"):
        gluon_gemm.matmul(a[:1].expand(3, 130, 96), w.mT, out=torch.empty(3, 130, 264, **h), schedule="pingpong")
    assert gluon_gemm._check_batched(a[:0], w[:0].mT, None, 128, 128, 64) is False
    assert gluon_gemm._check_batched(a[:, :0], w.mT, None, 128, 128, 64) is True  # (3, 0, 96) @ (3, 96, 264): K-major
    gluon_gemm._check_batched(a[:, :, :0], w[:, :, :0].mT, None, 128, 128, 64)  # K = 0 passes: run zeroes out
    one = torch.randn(1, 200, 96).to(**h)[:, :130]  # an entry's rows from a larger buffer: stride(0) is free
    assert gluon_gemm._check_batched(one, w[:1].mT, torch.empty(1, 300, 264, **h)[:, :130], 128, 128, 64) is True
    buffer = torch.randn(3 * 128 * 128).to(**h)  # out over the whole of it, b its first 3 x 96 x 128
    with pytest.raises(ValueError, match="overlaps"):
        gluon_gemm.matmul(torch.randn(3, 128, 96).to(**h), buffer[:3 * 96 * 128].view(3, 96, 128),
                          out=buffer.view(3, 128, 128), schedule="pingpong")


def test_empty_operands_pass_the_layout_checks():
    """torch gives an empty (16, 0) or (0, 8) tensor strides (1, 1): no rows to address, so no layout is refused
    (the device returns zeros or an empty result without a launch: test_gpu_allocates_out_and_handles_empty_products)."""
    for a, b in (((16, 0), (0, 8)), ((0, 16), (16, 8)), ((16, 16), (16, 0))):
        a, b = torch.randn(*a).to(torch.bfloat16), torch.randn(*b).to(torch.bfloat16)
        gluon_gemm._check(a, b, None)
    with pytest.raises(ValueError, match="row-major"):  # a non-empty column-major a is still refused
        gluon_gemm._check(torch.randn(16, 24).to(torch.bfloat16).T, torch.randn(16, 8).to(torch.bfloat16), None)


def test_shared_memory_budget_gives_the_designed_stages():
    assert {name: gluon_gemm.stages(name) for name in gluon_gemm.SCHEDULES} == {
        "cooperative": 4, "cooperative-s3": 3, "pingpong": 5, "cluster": 4, "wide": 4}


@pytest.mark.skipif(not HAS_GLUON, reason="the Gluon GEMM needs Triton >= 3.8")
def test_compiles_for_sm90a_without_a_gpu(tmp_path):
    """Every schedule, both B layouts (bf16) and fp16 through ptxas for sm_90a, and the ping-pong schedule's batched
    form: within 227 KiB of shared memory, nothing spilled, the loader down to 24 registers, wgmma issued, and the
    cluster's B multicast."""
    result = _run_python("""
        import json
        from tritonmm.kernels import gluon_build, gluon_gemm
        cases = [(s, "bf16", k, False) for s in gluon_gemm.SCHEDULES for k in (False, True)] + [
            ("cooperative", "fp16", False, False), ("pingpong", "bf16", True, True), ("pingpong", "fp16", False, True)]
        report = {}
        for schedule, dtype, b_kmajor, batched in cases:
            kernel = gluon_build.compile_sm90(dtype, b_kmajor, schedule, batched)
            ptx = kernel.asm["ptx"]
            report[f"{schedule} {dtype} {'NT' if b_kmajor else 'NN'}{' batched' if batched else ''}"] = dict(
                gluon_build.resources(kernel), wgmma="wgmma.mma_async" in ptx, multicast="multicast::cluster" in ptx,
                sm90a=".target sm_90a" in ptx, cubin=len(kernel.asm["cubin"]))
        print("REPORT" + json.dumps(report))
    """, TRITON_CACHE_DIR=str(tmp_path))  # compiled here, not found in a cache
    assert result.returncode == 0, result.stderr[-5000:]
    report = json.loads(result.stdout.split("REPORT", 1)[1])
    assert len(report) == 2 * len(gluon_gemm.SCHEDULES) + 3
    for name, r in report.items():
        assert r["sm90a"] and r["cubin"] > 0 and r["wgmma"], name
        assert r["shared"] <= gluon_gemm.SMEM_BYTES, (name, r)
        assert r["spill_stores"] == r["spill_loads"] == r["stack"] == 0, (name, r)
        assert 24 in r["setmaxnreg"] and max(r["setmaxnreg"]) >= 232, (name, r)
        assert r["multicast"] == ("cluster" in name), (name, r)
        if name.startswith("wide"):  # three consumer warpgroups share what the loader leaves: 160 registers each
            assert r["registers"] == 128 and 160 in r["setmaxnreg"], (name, r)


# --- on a Hopper GPU ------------------------------------------------------------------------------------------

SHAPES = [(1, 8, 8), (130, 264, 520), (1000, 1000, 1000), (2047, 3000, 1032), (300, 8, 4104)]  # M x N x K


def _skip_unless_available():
    ok, reason = gluon_gemm.available()
    if not ok:
        pytest.skip(reason)


@pytest.mark.gpu
@pytest.mark.parametrize("schedule", list(gluon_gemm.SCHEDULES))
@pytest.mark.parametrize("layout", ["NN", "NT"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gpu_matches_float64(shape, dtype, layout, schedule):
    """Odd, non-square shapes with edges inside tiles, into an out filled with NaN: every element written."""
    _skip_unless_available()
    torch.manual_seed(sum(shape))
    a, b = _operands(*shape, dtype, layout, "cuda")
    out = torch.full((shape[0], shape[1]), float("nan"), dtype=dtype, device="cuda")
    assert gluon_gemm.matmul(a, b, out=out, schedule=schedule) is out
    assert rel_err(out, a, b) < BOUND[dtype]


BATCHES = [  # (Z, M, N, K, layout, broadcast operand, row padding), M and N past the schedule's tile by these
    (3, 44, 8, 128, "NT", "", 0), (2, 3, 136, 192, "NN", "", 0), (4, 200, 16, 96, "NT", "", 0), (3, 0, 0, 64, "NN", "", 0),
    (5, 100, 40, 80, "NT", "b", 0), (3, 8, 24, 128, "NN", "a", 0),
    (3, 44, 8, 72, "NT", "", 8), (2, 3, 136, 128, "NN", "", 16),  # rows padded with NaN: nothing past K or N is read
    (3, 8, 24, 40, "NN", "b", 0),  # a broadcast row-major B of K under a step: TMA fills its rows past K with zeros
    (48, 100, 40, 128, "NT", "", 0)]  # more tiles than programs: each program walks several, the ring wraps


def _batch_operand(Z, rows, cols, dtype, pad):
    """(Z, rows, cols) of fresh random values, a view of a NaN-filled buffer whose rows are cols + pad long."""
    view = torch.full((Z, rows, cols + pad), float("nan"), dtype=dtype, device="cuda")[..., :cols]
    return view.copy_(torch.randn(Z, rows, cols, device="cuda").to(dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("schedule", list(gluon_gemm.SCHEDULES))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("batch", BATCHES, ids=lambda c: f"{c[0]}x{c[4]}{c[5]}k{c[3]}p{c[6]}")
def test_gpu_batches_match_float64(batch, dtype, schedule):
    """A batch as 2-D views whose rows stack the entries (gluon_gemm.run): entries past a tile by a part of one (the
    last tile of each moved back inside it), NN (K a multiple of the K step, or B broadcast) and NT, K of one or more
    steps or part of one, A or B broadcast, rows padded with NaN; into a NaN-filled out (its padding too), every
    element written and nothing past N, and a rerun gives the same bits."""
    _skip_unless_available()
    Z, dm, dn, K, layout, broadcast, pad = batch
    s = gluon_gemm.SCHEDULES[schedule]
    M, N = s.tile_m + dm, s.tile_n + dn
    torch.manual_seed(Z * M + N + K)
    a = _batch_operand(Z, M, K, dtype, pad)
    b = _batch_operand(Z, N, K, dtype, pad).mT if layout == "NT" else _batch_operand(Z, K, N, dtype, pad)
    a = a[:1].expand(Z, M, K) if broadcast == "a" else a
    b = b[:1].expand(Z, K, N) if broadcast == "b" else b
    buffer = torch.full((Z, M, N + pad), float("nan"), dtype=dtype, device="cuda")
    out = buffer[..., :N]
    assert gluon_gemm.matmul(a, b, out=out, schedule=schedule) is out
    first = out.clone()
    assert rel_err(out, a, b) < BOUND[dtype] and torch.isnan(buffer[..., N:]).all()
    out.fill_(float("nan"))
    gluon_gemm.matmul(a, b, out=out, schedule=schedule)
    assert torch.equal(out, first)


def _padded(rows, cols, dtype, device, pad):
    """A (rows, cols) view of a NaN-filled buffer whose rows are cols + pad elements apart (as tritonmm's staged
    copies' rows are padded), filled with fresh random values."""
    view = torch.full((rows, cols + pad), float("nan"), dtype=dtype, device=device)[:, :cols]
    return view.copy_(torch.randn(rows, cols, device=device).to(dtype))


def test_padded_rows_pass_the_layout_checks():
    """Rows a multiple of 16 bytes apart but longer than a row (a staged buffer's) pass for a, b and out, with K
    of any size; rows not 16 bytes apart are refused, naming the operand, and so is an N that is no multiple of 8
    (TMA would store the rest of the 16-byte chunk past each row: triton#11583)."""
    a = _padded(5, 12, torch.bfloat16, "cpu", pad=4)  # rows 16 apart
    b, out = (_padded(*shape, torch.bfloat16, "cpu", pad=8) for shape in ((12, 16), (5, 16)))  # rows 24 apart
    with pytest.raises(ValueError, match="N = 20 is not a multiple of 8"):
        gluon_gemm._check(a, _padded(12, 20, torch.bfloat16, "cpu", pad=4), _padded(5, 20, torch.bfloat16, "cpu", pad=4))
    assert gluon_gemm._check(a, b, out) is False
    assert gluon_gemm._check(a, _padded(16, 12, torch.bfloat16, "cpu", pad=4).T, out) is True  # K-major b: w.T
    with pytest.raises(ValueError, match="^a must be row-major"):
        gluon_gemm._check(_padded(5, 12, torch.bfloat16, "cpu", pad=2), b, out)  # rows 28 bytes apart
    with pytest.raises(ValueError, match="^out must be"):
        gluon_gemm._check(a, b, _padded(5, 16, torch.bfloat16, "cpu", pad=2))


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_gpu_reads_and_writes_padded_rows(layout):
    """a, b and out as views of buffers whose rows are padded past K and N (K not a multiple of 8): the
    descriptors carry the row strides, the padding past K (NaN) is not read, and nothing past N is written."""
    _skip_unless_available()
    torch.manual_seed(7)
    M, N, K = 300, 1000, 1003
    a = _padded(M, K, torch.bfloat16, "cuda", pad=13)
    b = _padded(N, K, torch.bfloat16, "cuda", pad=13).T if layout == "NT" else _padded(K, N, torch.bfloat16, "cuda",
                                                                                         pad=16)
    buf = torch.full((M, N + 16), float("nan"), dtype=torch.bfloat16, device="cuda")
    out = gluon_gemm.matmul(a, b, out=buf[:, :N])
    assert rel_err(out, a, b) < BOUND[torch.bfloat16]
    assert torch.isnan(buf[:, N:]).all()  # the padding is not written


@pytest.mark.gpu
def test_gpu_allocates_out_and_handles_empty_products():
    _skip_unless_available()
    a, b = _operands(257, 512, 136, torch.bfloat16, "NN", "cuda")
    out = gluon_gemm.matmul(a, b)
    assert out.shape == (257, 512) and out.dtype == torch.bfloat16 and rel_err(out, a, b) < BOUND[torch.bfloat16]
    a0, b0 = _operands(16, 8, 0, torch.bfloat16, "NN", "cuda")
    assert torch.equal(gluon_gemm.matmul(a0, b0), torch.zeros(16, 8, dtype=torch.bfloat16, device="cuda"))
    assert gluon_gemm.matmul(*_operands(0, 8, 16, torch.bfloat16, "NN", "cuda")).shape == (0, 8)


def _rule(a, b, c=None, bias=None, activation="none"):
    from tritonmm import device, rules
    c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype) if c is None else c
    return rules.gluon(device.facts(a.device), a, b, c, bias, activation, (None, None))


def test_planner_rule_takes_large_plain_products_where_gluon_runs(monkeypatch):
    """rules.gluon's class (design.md: gluon-gemm): plain unbatched 16-bit products of at least gluon_min_macs,
    A row-major, B either way, C's rows ending on 16-byte boundaries, where the kernel runs."""
    from tritonmm import thresholds
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    bf = dict(dtype=torch.bfloat16)
    a, b, w = torch.empty(128, 64, **bf), torch.empty(64, 136, **bf), torch.empty(136, 64, **bf)
    assert not _rule(a, b)  # below gluon_min_macs (2**37)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_fill", 0)  # any tiles (gluon-fill)
    assert _rule(a, b) and _rule(a, w.T) and _rule(a.half(), b.half())
    assert not _rule(torch.empty(64, 128, **bf).T, b)  # A transposed: the kernel reads A row-major only
    assert not _rule(a, b, bias=torch.empty(136, **bf)) and not _rule(a, b, activation="relu")
    assert not _rule(a.float(), b.float()) and not _rule(a[None], b[None])
    wide = torch.empty(128, 144, **bf)
    assert not _rule(a, b[:, :130], c=wide[:, :130])  # C's rows end inside a 16-byte chunk
    assert _rule(a, b, c=wide[:, :136])  # padded rows that end on one
    # Fewer rows or columns than cost_model.MIN_ROWS (128) stream an operand: the `tl` kernel's (gluon-few-rows).
    assert not _rule(a[:127], b) and not _rule(a, b[:, :120]) and _rule(a, b[:, :128])
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert not _rule(a, b)


def test_wide_rule_takes_mid_size_products_whose_tiles_fill_their_waves(monkeypatch):
    """rules.gluon's wide class (design.md: gluon-wide), on an H100's 132 SMs: from gluon_wide_min_macs (2**31)
    to gluon_min_macs, where 192x128 tiles take one wave, at least 70% full."""
    from tritonmm import device, rules, thresholds
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    facts = device.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)

    def schedule(M, N, K, dtype=torch.bfloat16, weight=False):
        a = torch.empty(M, K, dtype=dtype)
        b = torch.empty(N, K, dtype=dtype).T if weight else torch.empty(K, N, dtype=dtype)
        return rules.gluon(facts, a, b, torch.empty(M, N, dtype=dtype), None, "none", (None, None))

    assert schedule(1536, 1536, 1536) == schedule(1536, 1536, 1536, weight=True) == "wide"  # 96 tiles: 73%
    assert schedule(1536, 1536, 1536, dtype=torch.float16) == "wide"
    assert schedule(1224, 2208, 1648) == "wide"  # 126 tiles: 95%
    assert schedule(2176, 2400, 1552) is None  # 228 tiles: two waves
    assert schedule(1520, 1200, 1400) is None  # 80 tiles: 61%
    assert schedule(2216, 1472, 2032) is None  # 144 tiles: a second wave of 12
    assert schedule(3072, 3072, 3072) is None  # three waves
    assert schedule(1536, 1536, 512) is None  # 1.2e9 multiply-adds, below gluon_wide_min_macs
    # Decode products x @ W.T whose 192x128 tiles would fill the SMs: fewer rows than cost_model.MIN_ROWS stream
    # the weight (design.md: gluon-few-rows). 112 and 108 tiles; from 154 rows (80% of a 192-row tile: design.md:
    # gluon-wide-rows) the wide schedule.
    assert schedule(64, 14336, 4096, weight=True) is None and schedule(32, 13824, 5120, weight=True) is None
    assert schedule(13824, 32, 5120) is None
    assert schedule(128, 14336, 4096, weight=True) is None and schedule(153, 14336, 4096, weight=True) is None
    assert schedule(154, 14336, 4096, weight=True) == schedule(192, 14336, 4096, weight=True) == "wide"
    assert schedule(300, 7168, 8192, weight=True) is None and schedule(308, 7168, 8192, weight=True) == "wide"
    with thresholds.override(gluon_wide_row_fill=0):
        assert schedule(128, 14336, 4096, weight=True) == "wide"
    assert schedule(4096, 4096, 8192) == "cooperative-s3"  # gluon_min_macs; 512 tiles of 128x256: 97% of 4 waves
    # Large, but their 128x256 tiles fill less than gluon_min_fill (90%) of their waves: the tl kernel's (gluon-fill)
    assert schedule(1088, 4096, 128256) is None  # 144 tiles: 55% of two waves
    assert schedule(1221, 8192, 32000) is None  # 320 tiles: 81% of three
    assert schedule(448, 8192, 128256) == "cooperative-s3"  # 128 tiles: 97% of one
    with thresholds.override(gluon_min_fill=0):
        assert schedule(1088, 4096, 128256) == "cooperative-s3"
    assert schedule(1536, 1536, 1536, dtype=torch.float32) is None
    with thresholds.override(gluon_wide_min_macs=float("inf")):
        assert schedule(1536, 1536, 1536) is None
    with thresholds.override(gluon_wide_waves=2):  # the last wave's fill counts: 228 tiles leave 96, 73%
        assert schedule(2176, 2400, 1552) == "wide" and schedule(1400, 3128, 1832) is None  # 200: 68, 52%
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert schedule(1536, 1536, 1536) is None


def _cluster_rule(a, b, c=None, bias=None, activation="none", facts=None):
    from tritonmm import device, rules
    facts = facts or device.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
    c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype) if c is None else c
    return rules.gluon_as_given(facts, a, b, c, bias, activation, (None, None), False) == "cluster"


def test_cluster_rule_takes_b_rows_tma_reads_slowly(monkeypatch):
    """rules.gluon_as_given's cluster class (design.md: gluon-misaligned), on an H100's facts: B's rows 16 but not 32 bytes
    apart, row-major or K-major, in products of at least gluon_min_macs (here lowered to 2**32) that the Gluon
    kernel takes, where it runs."""
    from tritonmm import device, thresholds
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    bf = dict(dtype=torch.bfloat16)
    a = torch.empty(1024, 2056, **bf)  # 1024 x 2104 x 2056: 4.4e9 multiply-adds
    b_nn = torch.empty(2056, 2104, **bf)  # rows of 4208 bytes: 16 past a multiple of 32
    w = torch.empty(2104, 2056, **bf)  # x @ W.T: B's rows are W's, 4112 bytes
    assert not _cluster_rule(a, b_nn)  # below gluon_min_macs (2**37)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_macs", 2 ** 32)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_fill", 0)  # any tiles (gluon-fill)
    assert _cluster_rule(a, b_nn) and _cluster_rule(a, w.T) and _cluster_rule(a.half(), b_nn.half())
    assert not _cluster_rule(a, torch.empty(2056, 2112, **bf))  # rows 4224 bytes apart: a multiple of 128
    assert not _cluster_rule(a, torch.empty(2056, 2128, **bf))  # 4256 bytes: 32 past 128, not realign's class
    assert not _cluster_rule(a[:, :1032], b_nn[:1032])  # 2.2e9 multiply-adds
    # At any fill of the waves (72 tiles of 128x256: 55% of one): gluon-fill bars the cooperative schedule only
    monkeypatch.delitem(thresholds.OVERRIDES, "gluon_min_fill")
    from tritonmm import rules
    h100 = device.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
    c = torch.empty(1024, 2104, **bf)
    assert _cluster_rule(a, b_nn)
    assert rules.gluon(h100, a, b_nn, c, None, "none", (None, None)) == rules.GLUON_WIDE_SCHEDULE  # 102 of 192x128
    assert rules.gluon(h100, a, b_nn, c, None, "none", (None, None), fill=False) == rules.GLUON_SCHEDULE
    assert not _cluster_rule(a, b_nn, bias=torch.empty(2104, **bf)) and not _cluster_rule(a, b_nn, activation="relu")
    assert not _cluster_rule(torch.empty(2056, 1024, **bf).T, b_nn)  # A transposed: the kernel reads A row-major
    assert not _cluster_rule(a.float(), b_nn.float())
    assert not _cluster_rule(a, b_nn, facts=device.DeviceFacts("NVIDIA A100", 108, 166912, False, False))
    with thresholds.override(gluon_cluster=False):
        assert not _cluster_rule(a, b_nn)
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert not _cluster_rule(a, b_nn)


def test_wide_as_given_rule_takes_rows_tma_reads_slowly(monkeypatch):
    """rules.gluon_as_given's wide class (design.md: gluon-wide-as-given), on an H100's facts: a product of the wide
    class whose A or B rows are 16 but not 32 bytes apart runs on the wide schedule over the caller's operands."""
    from tritonmm import device, rules, thresholds
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    facts = device.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
    bf = dict(dtype=torch.bfloat16)

    def takes(a, b, bias=None, on=facts):
        c = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype)
        return rules.gluon_as_given(on, a, b, c, bias, "none", (None, None), False) == "wide"

    # 1528 x 1544 x 1544: 8 x 13 = 104 tiles of 192x128, 79% of a wave; rows of 1544 elements are 3088 bytes
    a, b, w = torch.empty(1528, 1544, **bf), torch.empty(1544, 1544, **bf), torch.empty(1544, 1544, **bf)
    assert takes(a, b) and takes(a, w.T) and takes(a.half(), b.half())
    assert takes(torch.empty(1528, 1536, **bf), torch.empty(1536, 1544, **bf))  # B's rows alone
    assert takes(a, torch.empty(1544, 1536, **bf))  # A's rows alone
    assert not takes(torch.empty(1528, 1536, **bf), torch.empty(1536, 1536, **bf))  # rows 3072 bytes apart
    assert not takes(torch.empty(1528, 1552, **bf), torch.empty(1552, 1552, **bf))  # 3104: 32 past 128
    assert not takes(torch.empty(2216, 1544, **bf), torch.empty(1544, 1480, **bf))  # 144 tiles: two waves
    # Large, but 64 tiles of 128x256 fill 48% of a wave (gluon-fill): rules.gluon gives it the wide schedule (96
    # tiles of 192x128), which reads A's rows as they are here too (131088 bytes: 16 past 32)
    assert takes(torch.empty(1024, 65544, **bf), torch.empty(65544, 2048, **bf))
    assert not takes(a, b, bias=torch.empty(1544, **bf)) and not takes(a.float(), b.float())
    assert not takes(torch.empty(1544, 1528, **bf).T, b)  # A transposed: the kernel reads A row-major
    assert not takes(a, b, on=device.DeviceFacts("NVIDIA A100", 108, 166912, False, False))
    with thresholds.override(gluon_min_macs=2 ** 31, gluon_min_fill=0):  # gluon's large class: clusters, for B's rows
        assert not takes(a, b) and _cluster_rule(a, b)
    with thresholds.override(gluon_wide_as_given=False):
        assert not takes(a, b)
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert not takes(a, b)


def test_batched_rule_takes_short_k_batches_of_many_tiles(monkeypatch):
    """rules.gluon_batched (design.md: gluon-batched-short-k), on an H200's 132 SMs: plain 16-bit batches of K in
    (64, 128], C's rows 32-byte aligned, at least 4 waves of 128x128 tiles, entries of at least a 128x128 tile
    stacked as the kernel reads them; the ping-pong schedule. Never where the kernel cannot run."""
    from tritonmm import device, rules, thresholds
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (True, ""))
    facts = device.DeviceFacts("NVIDIA H200", 132, 232448, True, True, 60 * 2 ** 20, (9, 0), 4.917e12)
    h = dict(dtype=torch.bfloat16)

    def schedule(Z, M, N, K, layout="NT", a=None, b=None, c=None, bias=None, **over):
        a = torch.empty(Z, M, K, **h) if a is None else a
        b = (torch.empty(Z, N, K, **h).mT if layout == "NT" else torch.empty(Z, K, N, **h)) if b is None else b
        c = torch.empty(Z, M, N, dtype=a.dtype) if c is None else c
        with thresholds.override(**over):
            return rules.gluon_batched(facts, a, b, c, bias, "none", (None, None))

    assert schedule(32, 3328, 3328, 128) == schedule(32, 3328, 3328, 128, "NN") == "pingpong"
    assert schedule(128, 1184, 1184, 96) == schedule(32, 624, 624, 80) == "pingpong"
    assert schedule(32, 1136, 1136, 128, a=torch.empty(32, 1136, 128, dtype=torch.float16),
                    b=torch.empty(32, 1136, 128, dtype=torch.float16).mT) == "pingpong"
    assert schedule(16, 4096, 4096, 64) is None and schedule(16, 4096, 4096, 136) is None  # K out of (64, 128]
    assert schedule(64, 3496, 3496, 80) is None  # C's rows 16 but not 32 bytes apart
    assert schedule(64, 2792, 2792, 80) is None  # 5584 bytes: 16 but not 32 bytes apart too
    assert schedule(8, 512, 512, 128) is None  # 128 tiles: under 4 waves
    assert schedule(8, 512, 512, 128, gluon_batched_min_waves=0) == "pingpong"
    assert schedule(4096, 100, 4096, 128) is None  # entries under a tile
    assert schedule(32, 3328, 3328, 128, "NN", b=torch.empty(32, 3328 + 8, 3328, **h)[:, :128]) is None  # apart
    assert schedule(32, 3328, 3328, 120, "NN") is None and schedule(32, 3328, 3328, 120) == "pingpong"  # NN: K steps
    assert schedule(32, 3328, 3328, 128, b=torch.empty(1, 3328, 128, **h).mT.expand(32, 128, 3328)) == "pingpong"
    assert schedule(32, 3328, 3328, 128, bias=torch.empty(3328, **h)) is None
    assert schedule(32, 3328, 3328, 128, a=torch.empty(32, 128, 3328, **h).mT) is None  # A transposed
    assert schedule(32, 3328, 3328, 128, gluon_batched_max_k=0) is None
    assert rules.gluon_batched(facts, torch.empty(3328, 128, **h), torch.empty(128, 3328, **h),
                               torch.empty(3328, 3328, **h), None, "none", (None, None)) is None  # unbatched
    monkeypatch.setattr(gluon_gemm, "available", lambda device=None: (False, "Triton 3.6"))
    assert schedule(32, 3328, 3328, 128) is None


def _gluon_runs(monkeypatch) -> list:
    """The (a, b, out, schedule) of each launch of the Gluon kernel through Triton (not a relaunch) from now on."""
    calls = []
    real = gluon_gemm.run
    monkeypatch.setattr(gluon_gemm, "run", lambda *args: calls.append(args) or real(*args))
    return calls


def _nan_out(M, N):
    return torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")


@pytest.mark.skipif(not HAS_GLUON, reason="the Gluon GEMM needs Triton >= 3.8")
def test_relaunch_repoints_gluon_descriptors(monkeypatch):
    """A cached Gluon launch (fast_launch.Compiled over the kernel's three descriptors) hands the launcher copies of
    its first launch's descriptors re-pointed at each call's A, B and C, layouts and blocks kept, then M, N, K and
    the constexprs; the bias and scales a relaunch passes are not the kernel's."""
    from tritonmm import fast_launch
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    blocks = gluon_gemm._blocks("cluster", False, torch.bfloat16)
    first = [torch.empty(256, 128, dtype=torch.bfloat16) for _ in range(3)]
    descs = [gluon_gemm.TensorDescriptor(t, list(t.shape), [128, 1], block, layout)
             for t, (block, layout) in zip(first, blocks.values())]

    class Recording:
        function, packed_metadata = "function", "metadata"

        def __init__(self):
            self.calls = []

        def run(self, *args):
            self.calls.append(args)
    kernel = Recording()
    compiled = fast_launch.Compiled(kernel, (64,), (256, 128, 128, False, 4, 1), descs, tensors=3)
    now = [torch.empty(256, 128, dtype=torch.bfloat16) for _ in range(3)]
    assert compiled((*now, None, None, None), 0)
    args = kernel.calls[0][9:]
    assert [d.base for d in args[:3]] == now and [d.layout for d in args[:3]] == [d.layout for d in descs]
    assert [d.block_shape for d in args[:3]] == [d.block_shape for d in descs] and args[3:] == (256, 128, 128, False, 4, 1)
    assert all(d.base is t for d, t in zip(descs, first))  # the cached ones keep pointing where they did


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_gpu_planner_runs_gluon_for_its_class(layout, monkeypatch):
    """With gluon_min_macs forced to 0 (but for the wide cases), the planner's TMA products run on the Gluon kernel,
    matching float64 into a NaN-filled out: aligned rows on cooperative-s3; B's rows 2064 (NN) or 4368 (NT) bytes apart on the cluster
    schedule over the caller's own tensors (rules.gluon_as_given: no copy); with the thresholds as shipped, a
    mid-size product whose 192x128 tiles fill a wave on the wide schedule, over the caller's own tensors where their
    rows are 16 but not 32 bytes apart (rules.gluon_as_given); chosen() says which. A second eager call
    relaunches from the cache (no launch through Triton), a captured one launches anew and replays right; a product
    with a bias stays on the tl kernel."""
    _skip_unless_available()
    import tritonmm
    from tritonmm import thresholds
    from tritonmm.planner import chosen
    calls = _gluon_runs(monkeypatch)
    torch.manual_seed(11)
    # given: read as they are, no copy (rules.gluon_as_given: B's rows of 2064 or 4368 bytes, or 3088)
    for (M, N, K), schedule, path, min_macs, given in (((1528, 1536, 1536), "wide", "gluon", 2 ** 37, False),
                                                       ((1528, 1544, 1544), "wide", "gluon", 2 ** 37, True),
                                                       ((1024, 1024, 2048), "cooperative-s3", "gluon", 0, False),
                                                       ((1000, 1032, 2184), "cluster", "gluon cluster", 0, True)):
        monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_macs", min_macs)
        monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_fill", 0)  # any tiles (gluon-fill)
        a, b = _operands(M, N, K, torch.bfloat16, layout, "cuda")
        out = _nan_out(M, N)
        assert tritonmm.mm(a, b, out=out) is out and rel_err(out, a, b) < BOUND[torch.bfloat16]
        assert calls[-1][3] == schedule and chosen(a, b, "native")[1] == path
        if given:
            assert calls[-1][0] is a and calls[-1][1] is b
        launched = len(calls)
        out.fill_(float("nan"))
        assert tritonmm.mm(a, b, out=out) is out and rel_err(out, a, b) < BOUND[torch.bfloat16]
        assert len(calls) == launched  # relaunched
        graph_out = _nan_out(M, N)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            tritonmm.mm(a, b, out=graph_out)
        graph.replay()
        assert rel_err(graph_out, a, b) < BOUND[torch.bfloat16] and len(calls) == launched + 1
    bias = torch.randn(1024, device="cuda").to(torch.bfloat16)
    launched = len(calls)
    y = tritonmm.linear(torch.randn(1024, 2048, device="cuda").to(torch.bfloat16),
                        torch.randn(1024, 2048, device="cuda").to(torch.bfloat16), bias)
    assert len(calls) == launched and torch.isfinite(y).all()


@pytest.mark.gpu
def test_gpu_planner_runs_short_k_batches_on_pingpong(monkeypatch):
    """rules.gluon_batched's class through tritonmm.matmul and torch.bmm under use_tritonmm (attention's q @ k.T):
    the ping-pong schedule over the caller's tensors, matching float64 into a NaN-filled out, eagerly (the second
    call relaunched from the cache, no launch through Triton) and in a CUDA graph; a broadcast B too."""
    _skip_unless_available()
    import tritonmm
    from tritonmm import thresholds
    from tritonmm.planner import chosen
    calls = _gluon_runs(monkeypatch)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_batched_min_waves", 0)  # a small batch, quick to check,
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 0)  # on the TMA path eagerly too
    torch.manual_seed(17)
    q = torch.randn(6, 520, 128, device="cuda").to(torch.bfloat16)
    for k in (torch.randn(6, 784, 128, device="cuda").to(torch.bfloat16),  # 784 = 6 x 128 + 16: C's rows 32-byte
              torch.randn(1, 784, 128, device="cuda").to(torch.bfloat16).expand(6, 784, 128)):  # aligned, last tile moved
        b = k.mT
        assert chosen(q, b, "native")[1] == chosen(q, b, "native", captured=True)[1] == "gluon"
        out = torch.full((6, 520, 784), float("nan"), dtype=torch.bfloat16, device="cuda")
        assert tritonmm.matmul(q, b, out=out) is out and rel_err(out, q, b) < BOUND[torch.bfloat16]
        ran = calls[-1]  # on the caller's memory, no copy (the planner may hand over views of the same tensors)
        assert ran[3] == "pingpong" and (ran[0].data_ptr(), ran[1].data_ptr()) == (q.data_ptr(), b.data_ptr())
        with tritonmm.use_tritonmm():  # the second call repeats from C++ where native dispatch is built
            for _ in range(2):
                again = torch.bmm(q, b)
                assert rel_err(again, q, b) < BOUND[torch.bfloat16]
        launched = len(calls)
        out.fill_(float("nan"))
        assert tritonmm.matmul(q, b, out=out) is out and rel_err(out, q, b) < BOUND[torch.bfloat16]
        assert len(calls) == launched  # relaunched from the cache
        graph_out = torch.full_like(out, float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            tritonmm.matmul(q, b, out=graph_out)
        graph.replay()
        assert rel_err(graph_out, q, b) < BOUND[torch.bfloat16]


@pytest.mark.gpu
def test_gpu_planner_relaunches_gluon_on_staged_copies(monkeypatch):
    """A's rows 4368 bytes apart, realigned (realign_min_macs_per_byte_a forced to 0) and B's aligned: cooperative-s3
    on the staged copy of A; relaunched calls repeat the copy (fresh A values each call) and stay right."""
    _skip_unless_available()
    import tritonmm
    from tritonmm import thresholds
    from tritonmm.planner import chosen
    calls = _gluon_runs(monkeypatch)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "gluon_min_fill", 0)  # any tiles (gluon-fill)
    monkeypatch.setitem(thresholds.OVERRIDES, "realign_min_macs_per_byte_a", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "realign_eager_min_macs", 0)  # an eager call of any size (realign-eager)
    torch.manual_seed(13)
    a, b = _operands(1000, 1024, 2184, torch.bfloat16, "NN", "cuda")
    assert chosen(a, b, "native")[1] == "gluon+staged"
    for step in range(3):
        a.normal_()
        out = _nan_out(1000, 1024)
        assert tritonmm.mm(a, b, out=out) is out and rel_err(out, a, b) < BOUND[torch.bfloat16]
        assert len(calls) == 1 and calls[0][0] is not a and calls[0][3] == "cooperative-s3"


def test_device_check_reports_and_fails_on_a_bad_result(capsys):
    """bench/gluon_check's summary on made-up results (its device run must not end in a formatting error), and a
    failed check, a hang or a child that cannot run makes it fail."""
    from bench import gluon_check
    compiled = dict(kind="compile", schedule="cooperative", dtype="bf16", layout="NN", shared=229556, registers=168,
                    setmaxnreg=[24, 240], spill_stores=0, spill_loads=0, stack=0)
    check = dict(kind="check", schedule="cooperative", shape="1x8x8", dtype="bf16", layout="NN", rel_err=3e-3,
                 same_bits=True, ok=True)
    time = dict(kind="time", schedule="cooperative", shape="4096x4096x4096", dtype="bf16", layout="NN",
                ms={"gluon": 0.18, "torch": 0.178}, spread_pct={"gluon": 1.0, "torch": 0.5},
                tflops={"gluon": 763.6, "torch": 772.1}, ratio=0.989, rel_err=None, ok=True)
    assert gluon_check.report([compiled, check, time], {})
    assert "763.6" in capsys.readouterr().out
    assert not gluon_check.report([compiled, dict(check, rel_err=float("inf"), ok=False), time], {})
    assert not gluon_check.report([compiled, check, time], {"cluster": "timed out after 150 s"})
    if not gluon_gemm.available()[0]:
        results, problem = gluon_check.run_child("cooperative", gluon_check.argparse.Namespace(
            rounds=1, layout="NN", quick=True, timeout=300))
        assert results == [] and problem.startswith("exit 2: cannot run the Gluon GEMM"), problem
