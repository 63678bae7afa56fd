"""tritonmm.matmul against float64, in the interpreter on the CPU and on the GPU."""
import itertools

import pytest
import torch
from conftest import HAS_GPU, rel_err

import tritonmm
from tritonmm import config_space
from tritonmm.precision import resolve_precision, torch_uses_tf32
from tritonmm.product import Product
from tritonmm.tune import operands

# Per-dtype bounds on the relative Frobenius error. fp32 defaults to IEEE (torch's default).
BOUND = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
DTYPES = [torch.float16, torch.bfloat16, torch.float32]
ODD = [(1, 1, 1), (1, 7, 31), (7, 1, 33), (31, 33, 1), (33, 65, 31), (65, 127, 129), (127, 31, 65)]


def run(a, b, **kw):
    out = torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=a.device)
    return tritonmm.matmul(a, b, out=out, **kw)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", ODD, ids=lambda s: "x".join(map(str, s)))
def test_odd_shapes(shape, dtype, device):
    a, b = operands(*shape, dtype, "NN", device)
    assert rel_err(run(a, b), a, b) < BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", [(48, 80, 96), (33, 17, 65)], ids=["aligned", "odd"])
def test_layouts_both_paths(layout, shape, dtype, device, path):
    """Transposed views, on both paths; rows that are not 16-byte multiples (odd) always take
    the pointer path."""
    a, b = operands(*shape, dtype, layout, device)
    out = run(a, b)
    assert Product(a, b, out, resolve_precision(dtype, None)).path == (path if shape == (48, 80, 96) else "pointer")
    assert rel_err(out, a, b) < BOUND[dtype]


def test_only_large_products_take_the_tma_path(device):
    """The TMA path costs more host time a call, so it serves products of tma_min_macs and up."""
    from tritonmm import thresholds
    small = operands(64, 96, 128, torch.float16, "NN", device)
    assert Product(*small, torch.empty(64, 96, dtype=torch.float16, device=device), "native").path == "pointer"
    m, n = 4096, 4096
    k = int(thresholds.for_device(tritonmm.device.facts(torch.device(device))).tma_min_macs) // (m * n)
    a = torch.empty(m, k, dtype=torch.float16, device=device)
    b = torch.empty(k, n, dtype=torch.float16, device=device)
    big = Product(a, b, torch.empty(m, n, dtype=torch.float16, device=device), "native").path
    assert big == ("tma" if tritonmm.device.facts(a.device).tma else "pointer")
    assert Product(a[:, :k - 1], b[:k - 1], torch.empty(m, n, dtype=torch.float16, device=device), "native").path == "pointer"


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sliced_and_strided_views(dtype, device):
    big_a = torch.randn(90, 70, device=device).to(dtype)
    big_b = torch.randn(80, 100, device=device).to(dtype)
    a = big_a[3:60:2, 5:50]  # stride (140, 1): a step over rows
    b = big_b[7:52, 1:99:3]  # stride (100, 3): no contiguous dimension at all
    assert rel_err(run(a, b), a, b) < BOUND[dtype]
    assert rel_err(run(a.T.contiguous().T, b), a, b) < BOUND[dtype]


def test_inputs_not_copied_or_modified(device):
    a, b = operands(40, 24, 56, torch.float32, "TN", device)
    a0, b0 = a.clone(), b.clone()
    tritonmm.matmul(a, b)
    assert torch.equal(a, a0) and torch.equal(b, b0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_out_is_filled_and_returned(dtype, device):
    a, b = operands(33, 47, 29, dtype, "NN", device)
    out = torch.full((33, 47), float("nan"), dtype=dtype, device=device)
    result = tritonmm.matmul(a, b, out=out)
    assert result is out
    assert rel_err(out, a, b) < BOUND[dtype]


def test_out_strided_view(device):
    a, b = operands(20, 30, 40, torch.float32, "NN", device)
    buf = torch.full((30, 20), float("nan"), device=device)
    out = buf.T  # a transposed output view
    tritonmm.matmul(a, b, out=out)
    assert rel_err(out, a, b) < 1e-5


@pytest.mark.parametrize("config", [
    dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16),
    dict(BLOCK_M=32, BLOCK_N=64, BLOCK_K=32, GROUP_M=4, num_warps=4, num_stages=2),
    dict(BLOCK_M=64, BLOCK_N=32, BLOCK_K=64, num_warps=2, num_stages=1),
    dict(BLOCK_M=64, BLOCK_N=32, BLOCK_K=256, num_warps=4, num_stages=4),  # the 16-bit narrow tile
])
@pytest.mark.parametrize("shape", [(70, 50, 90), (64, 96, 128)], ids=["odd", "aligned"])
def test_pinned_configs(config, shape, device, path):
    import triton
    a, b = operands(*shape, torch.float16, "NN", device)
    assert rel_err(run(a, b, config=config), a, b) < BOUND[torch.float16]
    as_triton = triton.Config({k: v for k, v in config.items() if k.isupper()}, num_warps=config.get("num_warps", 4),
                              num_stages=config.get("num_stages", 3))
    assert rel_err(run(a, b, config=as_triton), a, b) < BOUND[torch.float16]


# One row of A (decode), three and eleven rows pinned to the row kernel, a single element; K of 45 and 129
# leaves a partial last chunk for every BLOCK_K.
ONE_ROW = [(1, 67, 45), (1, 1, 1), (3, 50, 129), (11, 37, 45)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_one_row_kernel(layout, dtype, device, path):
    """The row kernel (configs of BLOCK_M below 16, kernels/gemv.py) against float64: the one-row space's first
    config, one column a program on one warp, and 2, 4 and 8 rows a program (the last rows' programs part empty)."""
    for shape in ONE_ROW:
        a, b = operands(*shape, dtype, layout, device)
        for cfg in (config_space.gemv_space()[0], config_space.make_config(1, 1, 16, 1, 1), *config_space.rows_space()):
            assert rel_err(run(a, b, config=cfg), a, b) < BOUND[dtype], (shape, cfg.kwargs)


def test_one_row_kernel_batched(device):
    """A batch of one-row products in one launch, one operand broadcast (batch stride 0)."""
    a, b = torch.randn(3, 1, 45, device=device).half(), torch.randn(1, 45, 67, device=device).half()
    out = tritonmm.matmul(a, b, config=config_space.make_config(1, 16, 16, 1, 4))
    ref = a.double() @ b.double()
    assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]
    a = torch.randn(3, 5, 45, device=device).half()  # five rows, four a program: one whole block and one part empty
    out = tritonmm.matmul(a, b, config=config_space.make_config(4, 16, 16, 1, 4))
    ref = a.double() @ b.double()
    assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "silu"])
def test_one_row_linear_fuses_bias_and_activation(activation, device):
    """A decode step of a linear layer: one row of x, the heuristic's one-row kernel, bias and
    activation in its epilogue, into a NaN-filled buffer."""
    sms = tritonmm.device.facts(torch.device(device)).num_sms
    x, w, bias = (torch.randn(*s, device=device).half() for s in ((1, 200), (8 * sms + 3, 200), (8 * sms + 3,)))
    assert config_space.is_gemv(tritonmm.planner.chosen(x, w.T, "native", bias, activation)[0])
    y = tritonmm.linear(x, w, bias, activation)
    ref = tritonmm.planner.epilogue_reference(x.double() @ w.double().T, bias.double(), activation)
    assert ((y.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]


def test_zero_sized(device):
    for dtype in DTYPES:
        a, b = torch.randn(0, 5, device=device).to(dtype), torch.randn(5, 3, device=device).to(dtype)
        assert tritonmm.matmul(a, b).shape == (0, 3)
        a, b = torch.randn(4, 5, device=device).to(dtype), torch.randn(5, 0, device=device).to(dtype)
        assert tritonmm.matmul(a, b).shape == (4, 0)
        a, b = torch.randn(4, 0, device=device).to(dtype), torch.randn(0, 3, device=device).to(dtype)
        out = torch.full((4, 3), float("nan"), dtype=dtype, device=device)
        assert torch.equal(tritonmm.matmul(a, b, out=out), torch.zeros(4, 3, dtype=dtype, device=device))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_nan_and_inf_propagate_like_torch(dtype, device, path):
    a, b = operands(20, 24, 40, dtype, "NN", device)
    a[3, 5] = float("nan")
    a[7, 2] = float("inf")
    b[1, 9] = float("-inf")
    out = tritonmm.matmul(a, b)
    ref = (a.double() @ b.double())
    for kind in (torch.isnan, torch.isposinf, torch.isneginf):
        assert torch.equal(kind(out), kind(ref)), kind.__name__
    finite = torch.isfinite(ref)  # rows 3 and 7 and column 9 are not
    clean_out, clean_ref = out.double()[finite], ref[finite]
    assert clean_ref.numel() == (20 - 2) * (24 - 1)
    assert ((clean_out - clean_ref).norm() / clean_ref.norm()).item() < BOUND[dtype]


def test_precision_follows_torch(device):
    flags = torch.backends.cuda.matmul
    saved = flags.fp32_precision
    try:
        flags.fp32_precision = "tf32"
        assert torch_uses_tf32() and resolve_precision(torch.float32, None) == "tf32"
        flags.fp32_precision = "ieee"
        assert not torch_uses_tf32() and resolve_precision(torch.float32, None) == "ieee"
        assert resolve_precision(torch.float32, "tf32") == "tf32"
        assert resolve_precision(torch.bfloat16, None) == "native"
    finally:
        flags.fp32_precision = saved


@pytest.mark.gpu
def test_tf32_is_used_exactly_when_asked():
    """On the GPU TF32 is measurably less exact than IEEE: that difference shows which ran."""
    a, b = operands(512, 384, 1024, torch.float32, "NN", "cuda")
    ieee = rel_err(run(a, b, input_precision="ieee"), a, b)
    tf32 = rel_err(run(a, b, input_precision="tf32"), a, b)
    assert ieee < 1e-5 and 1e-5 < tf32 < 2e-3
    flags = torch.backends.cuda.matmul
    saved = flags.fp32_precision
    try:
        flags.fp32_precision = "tf32"
        assert rel_err(run(a, b), a, b) > 1e-5
        flags.fp32_precision = "ieee"
        assert rel_err(run(a, b), a, b) < 1e-5
    finally:
        flags.fp32_precision = saved


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
def test_gpu_larger_shapes(dtype, layout, path):
    for shape in [(1000, 1000, 1000), (2048, 1536, 1024), (17, 4096, 4096), (4095, 4097, 1531), (4096, 4096, 2048)]:
        a, b = operands(*shape, dtype, layout, "cuda")
        assert rel_err(run(a, b), a, b) < BOUND[dtype], shape


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gpu_autotuned_result(dtype, monkeypatch):
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    a, b = operands(1536, 1024, 2048, dtype, "NN", "cuda")
    assert rel_err(run(a, b), a, b) < BOUND[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("prec", ["tf32", "ieee"])
def test_gpu_fp32_precisions(prec):
    for layout, shape in itertools.product(["NN", "NT", "TN", "TT"], [(1024, 1024, 1024), (333, 517, 1029)]):
        a, b = operands(*shape, torch.float32, layout, "cuda")
        assert rel_err(run(a, b, input_precision=prec), a, b) < (2e-3 if prec == "tf32" else 1e-5)


@pytest.mark.gpu
def test_gpu_every_config_of_the_space_is_correct(path):
    """Each config the tuner may pick (the narrow and short tiles and the one-row kernel's too) computes the right
    answer (one compile each)."""
    # tf32x3 on the TMA path splits its operands first and tunes over a space of its own
    for dtype, prec in [(torch.bfloat16, None), (torch.float32, "tf32"), (torch.float32, "ieee"),
                        (torch.float32, "tf32x3")]:
        family = config_space.family(dtype, prec or "tf32", path == "tma")
        for cfg in tritonmm.configs(dtype, prec or "tf32", split_operands=path == "tma") + \
                config_space.narrow_space(family) + config_space.short_space(family) + config_space.gemv_space() + \
                config_space.rows_space():
            a, b = operands(300, 520, 700, dtype, "NN", "cuda")
            try:
                out = run(a, b, config=cfg, input_precision=prec)
            except Exception as e:  # too much shared memory is a legal refusal, not a wrong answer
                assert "shared memory" in str(e) or "OutOfResources" in type(e).__name__, e
                continue
            assert rel_err(out, a, b) < (2e-3 if prec == "tf32" else 1e-5 if prec else BOUND[dtype]), cfg


def test_configs_api():
    for dtype in DTYPES:
        cfgs = tritonmm.configs(dtype)
        assert cfgs and all({"BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"} <= set(c.kwargs) for c in cfgs)
    assert tritonmm.configs(torch.float32, "ieee") != tritonmm.configs(torch.float32, "tf32")
    assert tritonmm.configs(torch.float16) != tritonmm.configs(torch.float32)


@pytest.mark.skipif(HAS_GPU, reason="the interpreter's bf16 bug exists only on the CPU")
def test_interpreter_bf16_is_not_garbage():
    """Triton's interpreter multiplies bf16 bit patterns (triton#11584); tritonmm must upcast."""
    a, b = operands(32, 32, 32, torch.bfloat16, "NN", "cpu")
    assert rel_err(tritonmm.matmul(a, b), a, b) < 1e-2
    assert rel_err(tritonmm.matmul(a[:, :31], b[:31]), a[:, :31], b[:31]) < 1e-2  # pointer path too


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", [(48, 80, 96), (33, 17, 65)], ids=["aligned", "odd"])
def test_tf32_staging_all_layouts(layout, shape, device, path):
    """TF32 copies non-K-major operands K-major first (matmul._k_major) on every path."""
    a, b = operands(*shape, torch.float32, layout, device)
    assert rel_err(run(a, b, input_precision="tf32"), a, b) < 2e-3


@pytest.mark.parametrize("shape", [(1, 1), (1, 70), (70, 1), (65, 129), (128, 64)])
def test_transpose(shape, device):
    from tritonmm.staging import transpose
    x = torch.randn(*shape, device=device)
    assert torch.equal(transpose(x), x.T)
    big = torch.randn(2 * shape[0] + 1, 3 * shape[1] + 2, device=device)
    view = big[1::2, ::3]  # strided in both dimensions
    assert torch.equal(transpose(view), view.T)
    assert torch.equal(transpose(x.T), x)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, prec", [(torch.bfloat16, None), (torch.float32, "tf32"), (torch.float32, "ieee")],
                         ids=["bf16", "tf32", "ieee"])
def test_gpu_cuda_graph_capture_and_replay(dtype, prec, path):
    """Small products are host-bound; a CUDA graph removes that, so capture must work."""
    a, b = operands(64, 96, 128, dtype, "NN", "cuda")
    out = torch.empty(64, 96, dtype=dtype, device="cuda")
    tritonmm.matmul(a, b, out=out, input_precision=prec)  # compile and pick the config outside capture
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        tritonmm.matmul(a, b, out=out, input_precision=prec)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tritonmm.matmul(a, b, out=out, input_precision=prec)
    for _ in range(2):
        new_a, new_b = operands(64, 96, 128, dtype, "NN", "cuda")
        a.copy_(new_a)
        b.copy_(new_b)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert rel_err(out, new_a, new_b) < (2e-3 if prec == "tf32" else BOUND[dtype])


# torch.matmul's cases: 1-D operands, folding N-D @ 2-D into M, batched with broadcasting.
MATMUL_SHAPES = [
    ((13,), (13,)), ((7, 13), (13,)), ((13,), (13, 5)), ((3, 7, 13), (13,)), ((13,), (3, 13, 5)),
    ((2, 3, 7, 13), (13, 5)), ((7, 13), (4, 13, 5)), ((4, 7, 13), (4, 13, 5)), ((2, 1, 7, 13), (3, 13, 5)),
    ((1, 7, 13), (6, 13, 5)), ((5, 0, 13), (13, 4)), ((2, 7, 0), (2, 0, 5)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: f"{s[0]}@{s[1]}".replace(" ", ""))
def test_matmul_follows_torch_matmul(shapes, dtype, device):
    a = torch.randn(*shapes[0], device=device).to(dtype)
    b = torch.randn(*shapes[1], device=device).to(dtype)
    out = tritonmm.matmul(a, b)
    ref = a.double() @ b.double()
    assert out.shape == ref.shape and out.dtype == dtype
    if ref.numel():
        assert torch.isfinite(out).all()
        assert ((out.double() - ref).norm() / ref.norm().clamp_min(1e-300)).item() < BOUND[dtype]


def test_matmul_folds_without_a_copy(device, monkeypatch):
    """N-D @ 2-D with foldable strides reaches the kernel as a view of a's memory."""
    from tritonmm import planner
    seen = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: seen.append(a.data_ptr()) or real(a, b, **kw))
    a = torch.randn(2, 3, 7, 13, device=device)
    tritonmm.matmul(a, torch.randn(13, 5, device=device))
    assert seen == [a.data_ptr()]


def test_matmul_broadcast_reads_with_stride_zero(device, monkeypatch):
    """A broadcast batch operand is read through a batch stride of 0, not copied per batch."""
    from tritonmm import planner
    strides = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: strides.append(b.stride(0)) or real(a, b, **kw))
    a = torch.randn(5, 7, 13, device=device)
    b = torch.randn(1, 13, 4, device=device)
    out = tritonmm.matmul(a, b)
    assert strides == [0]
    assert ((out.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm()) < 1e-5


def test_matmul_out(device):
    a, b = torch.randn(3, 5, 7, device=device), torch.randn(7, 4, device=device)
    out = torch.full((3, 5, 4), float("nan"), device=device)
    assert tritonmm.matmul(a, b, out=out) is out
    assert ((out.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm()) < 1e-5


@pytest.mark.parametrize("case", ["batch", "batch broadcast", "folded", "folded, strided out", "batch, strided out"])
def test_matmul_out_written_in_place_under_the_callers_key(case, device, monkeypatch):
    """out= of an N-D product is handed to the planner where it views as the planner's result (else the result is
    copied in); for a batch of the caller's own 3-D operands, under the launch-cache key of the caller's call, so
    that a repeat relaunches before any check (test_gpu_matmul_out_repeats_from_the_cache)."""
    from tritonmm import planner, relaunch
    Z, M, K, N = 3, 5, 33, 4
    a = torch.randn(Z, M, K, device=device)
    b = torch.randn(1 if "broadcast" in case else Z, K, N, device=device) if "batch" in case else \
        torch.randn(K, N, device=device)
    # a strided out: its batches interleaved, which no (Z * M, N) view can take (a (Z, M, N) one can)
    out = torch.full((M, Z, N), float("nan"), device=device).transpose(0, 1) if "strided" in case else \
        torch.full((Z, M, N), float("nan"), device=device)
    planned = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: planned.append((a, b, kw)) or real(a, b, **kw))
    assert tritonmm.matmul(a, b, out=out) is out
    ref = a.double() @ b.double()
    assert (out.double() - ref).norm() / ref.norm() < 1e-5
    (a2, b2, kw), = planned
    into = kw["out"]
    assert (into is None) == (case == "folded, strided out")
    if into is not None:
        assert into.data_ptr() == out.data_ptr()
    same_key = relaunch.key(a, b, out, None, "none", kw["precision"]) == \
        relaunch.key(a2, b2, into, None, "none", kw["precision"])
    assert same_key == (case.startswith("batch") and "broadcast" not in case)


@pytest.mark.gpu
def test_gpu_matmul_out_repeats_from_the_cache(monkeypatch):
    from tritonmm import validation
    a, b = (torch.randn(4, 96, 64, device="cuda").half(), torch.randn(4, 64, 80, device="cuda").half())
    out = torch.full((4, 96, 80), float("nan"), device="cuda", dtype=torch.half)
    ref = a.double() @ b.double()
    assert tritonmm.matmul(a, b, out=out) is out
    monkeypatch.setattr(validation, "check_matmul_args", lambda *args: pytest.fail("not from the cache"))
    out.fill_(float("nan"))
    assert tritonmm.matmul(a, b, out=out) is out
    assert (out.double() - ref).norm() / ref.norm() < 2e-3


ACTS = [None, "relu", "gelu", "gelu_tanh", "silu"]
TORCH_ACT = {None: lambda z: z, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
             "gelu_tanh": lambda z: torch.nn.functional.gelu(z, approximate="tanh"), "silu": torch.nn.functional.silu}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
def test_linear_epilogue(bias, act, dtype, device, path):
    """The bias add and the activation in the kernel's epilogue, on both kernel paths."""
    x = torch.randn(2, 8, 32, device=device).to(dtype)
    w = (torch.randn(40, 32, device=device) / 4).to(dtype)
    b = torch.randn(40, device=device).to(dtype) if bias else None
    y = tritonmm.linear(x, w, b, act)
    ref = TORCH_ACT[act](torch.nn.functional.linear(x.double(), w.double(), None if b is None else b.double()))
    assert y.shape == (2, 8, 40) and y.dtype == dtype
    assert ((y.double() - ref).norm() / ref.norm()).item() < BOUND[dtype]


def test_linear_with_empty_sum_is_the_epilogue(device):
    x, w, b = torch.randn(4, 0, device=device), torch.randn(3, 0, device=device), torch.randn(3, device=device)
    assert torch.allclose(tritonmm.linear(x, w, b, "relu"), torch.relu(b).expand(4, 3))


@pytest.mark.gpu
def test_gpu_large_batch_one_launch():
    """The batch shares grid axis 0 with the tiles, so batches past grid-y/z limits need no loop."""
    a = torch.randn(70000, 2, 3, device="cuda")
    b = torch.randn(70000, 3, 2, device="cuda")
    out = tritonmm.matmul(a, b, input_precision="ieee")
    assert torch.allclose(out, a @ b, atol=1e-5)


@pytest.mark.parametrize("make, kind", [
    (lambda d: None, "none"), (lambda d: torch.randn(40, device=d), "row"),
    (lambda d: torch.randn(24, 1, device=d), "column"), (lambda d: torch.randn(24, 40, device=d), "matrix"),
    (lambda d: torch.randn(1, 40, device=d), "row"),
])
def test_bias_kinds_load_vectors_as_vectors(make, kind, device):
    """planner.product takes any bias that broadcasts to (M, N); vectors get the cheap epilogue,
    and the epilogue is part of the tuning key (it changes what fits in shared memory)."""
    from tritonmm import planner, product  # noqa: F401
    a, b = operands(24, 40, 32, torch.float32, "NN", device)
    bias = make(device)
    assert tritonmm.layout.bias_kind(bias, 24, 40) == kind
    out = planner.product(a, b, bias=bias, activation="relu", precision="ieee")
    ref = torch.relu(a.double() @ b.double() + (0 if bias is None else bias.double()))
    assert ((out.double() - ref).norm() / ref.norm()) < 1e-5
    keys = {product.Product(a, b, out, "ieee", bias=bias, activation=act).tuning_key for act in ("none", "relu")}
    assert len(keys) == 2


@pytest.mark.gpu
def test_gpu_epilogue_is_tuned_apart(path, monkeypatch, tmp_path):
    """A config tuned for the plain product is not reused with an epilogue that needs more
    shared memory (a 4-stage 128x256 TMA config ran out of it with a bias tile; design.md: vector-bias)."""
    from tritonmm import planner, tuning
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    tuning.forget()
    x = torch.randn(512, 256, device="cuda").bfloat16()
    w = torch.randn(384, 256, device="cuda").bfloat16()
    tritonmm.mm(x, w.T)
    for bias in (torch.randn(384, device="cuda"), torch.randn(512, 384, device="cuda"), torch.randn(512, 1, device="cuda")):
        out = planner.product(x, w.T, bias=bias.bfloat16(), activation="gelu_tanh", precision="native")
        ref = torch.nn.functional.gelu(x.double() @ w.double().T + bias.bfloat16().double(), approximate="tanh")
        assert ((out.double() - ref).norm() / ref.norm()) < 1e-2
