"""Precision beyond torch.mm: float32 products in tf32x3 (three TF32 tensor-core products)."""
import pytest
import torch
from conftest import every_product_on_the_tma_kernel, rel_err

import tritonmm
from tritonmm import config_space
from tritonmm.precision import resolve_precision
from tritonmm.product import Product
from tritonmm.tune import operands

SHAPES = [(1, 7, 31), (33, 65, 31), (127, 129, 257), (64, 64, 64)]


@pytest.fixture
def float32_default():
    """Restores the process-wide float32 precision after a test changes it."""
    previous = tritonmm.set_float32_precision(None)
    tritonmm.set_float32_precision(previous)
    yield
    tritonmm.set_float32_precision(previous)


@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tf32x3_against_float64(shape, layout, device, path):
    """As exact as IEEE float32 (the interpreter runs it as IEEE; the GPU as three TF32 products)."""
    a, b = operands(*shape, torch.float32, layout, device)
    out = torch.full(shape[:2], float("nan"), device=device)
    tritonmm.matmul(a, b, out=out, input_precision="tf32x3")
    assert rel_err(out, a, b) < 1e-5


def test_tf32x3_linear_and_autograd(device):
    x = torch.randn(5, 40, device=device, requires_grad=True)
    w = torch.randn(24, 40, device=device, requires_grad=True)
    bias = torch.randn(24, device=device, requires_grad=True)
    y = tritonmm.linear(x, w, bias, "gelu", input_precision="tf32x3")
    xd, wd, bd = (t.detach().double().requires_grad_() for t in (x, w, bias))
    ref = torch.nn.functional.gelu(torch.nn.functional.linear(xd, wd, bd))
    assert ((y.double() - ref).norm() / ref.norm()) < 1e-5
    g = torch.randn_like(y)
    y.backward(g)
    ref.backward(g.double())
    for got, want in ((x.grad, xd.grad), (w.grad, wd.grad), (bias.grad, bd.grad)):
        assert ((got.double() - want).norm() / want.norm()) < 1e-5


def test_process_wide_default(float32_default, device):
    flags = torch.backends.cuda.matmul
    saved = flags.fp32_precision
    try:
        flags.fp32_precision = "tf32"
        assert resolve_precision(torch.float32, None) == "tf32"  # torch's rule while none is set
        assert tritonmm.set_float32_precision("tf32x3") is None
        assert resolve_precision(torch.float32, None) == "tf32x3"
        assert resolve_precision(torch.float32, "ieee") == "ieee"  # an explicit argument wins
        assert resolve_precision(torch.bfloat16, None) == "native"
        assert tritonmm.set_float32_precision(None) == "tf32x3"
        assert resolve_precision(torch.float32, None) == "tf32"
    finally:
        flags.fp32_precision = saved
    with pytest.raises(ValueError, match="tf32x3"):
        tritonmm.set_float32_precision("fp64")


def test_tf32x3_has_its_own_space_and_kernel_constant(device):
    assert config_space.family(torch.float32, "tf32x3") == "tf32x3"
    assert config_space.configs(torch.float32, "tf32x3") != config_space.configs(torch.float32, "tf32")
    a, b = operands(32, 32, 32, torch.float32, "NN", device)
    launch = Product(a, b, torch.empty(32, 32, device=device), "tf32x3")
    assert launch.constants["INPUT_PRECISION"] == "tf32x3"
    assert "tf32x3" in launch.tuning_key and "tf32x3" in launch.cache_key()


def test_tf32_split_parts(device):
    """The split tf32x3's TMA kernel reads: both parts TF32 (low 13 mantissa bits zero), their sum
    x to 2**-22 relative; Inf and NaN whole in the high part, which is x truncated (finite near
    float32's largest); every remainder of a nonzero x has x's sign, a zero one (x a TF32 value,
    an Inf) becoming 2**-126, so that a remainder times an Inf is never NaN nor of the wrong
    sign. Read through a transposed view too."""
    x = torch.randn(70, 130, device=device) * torch.logspace(-30, 30, 130, device=device)
    x[0, :7] = torch.tensor([float("inf"), -float("inf"), float("nan"), 3.4028235e38, -3.4028235e38, 0.0, -1.0])
    x[1, 0] = torch.tensor(0x7F800001, dtype=torch.int32).view(torch.float32)  # a NaN with a low-bit payload
    for src in (x, x.T.contiguous().T):
        hi, lo = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
        tritonmm.staging.copy(src, hi, lo=lo)
        for part in (hi, lo):
            assert not (part.view(torch.int32) & 0x1FFF).any()
        finite = x.isfinite()
        err = (hi.double() + lo.double() - x.double()).abs()
        assert (err[finite] <= 2.0 ** -22 * x.double().abs()[finite]).all()
        assert hi[0, 3:5].isfinite().all() and torch.equal(hi[0, :2], x[0, :2]) and hi[0, 2].isnan()
        assert hi[1, 0].isnan() and lo[1, 0] == 0
        big = x.abs() >= 2.0 ** -102
        assert torch.equal(lo[big].sign(), x[big].sign()) and (hi.abs() <= x.abs())[finite].all()
        assert lo[0, :7].tolist() == [2.0 ** -126, -2.0 ** -126, 0.0, lo[0, 3].item(), lo[0, 4].item(), 0.0,
                                      -2.0 ** -126]


@pytest.fixture
def split_path(monkeypatch, device):
    """Every tf32x3 product on the TMA kernel with split operands: on Hopper, or in the CPU
    interpreter (which runs tensor descriptors) as if on one."""
    every_product_on_the_tma_kernel(monkeypatch, device)


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", [(33, 65, 31), (64, 48, 40), (1, 9, 70), (130, 200, 257)],
                         ids=lambda s: "x".join(map(str, s)))
def test_tf32x3_split_operands_on_the_tma_kernel(shape, layout, device, split_path):
    """Split once into stacked K-major buffers, never the caller's tensors; a missing or misread
    remainder would leave TF32's error (~1e-4) even in the interpreter, where each dot is exact."""
    a, b = operands(*shape, torch.float32, layout, device)
    a_before, b_before = a.clone(), b.clone()
    out = torch.full(shape[:2], float("nan"), device=device)
    launch = Product(a, b, out, "tf32x3")
    assert launch.presplit and launch.path == "tma" and launch.constants["PRESPLIT"]
    assert launch.a.shape == (2 * shape[0], shape[2]) and launch.b.shape == (shape[2], 2 * shape[1])
    assert launch.tuning_key[2] == "tf32x3-split" and launch.space() == config_space.space("tf32x3-split")
    launch.run(launch.heuristic())
    assert rel_err(out, a, b) < 1e-5
    assert torch.equal(a, a_before) and torch.equal(b, b_before)


@pytest.mark.parametrize("special", [float("inf"), float("-inf"), float("nan")], ids=str)
def test_tf32x3_split_operands_propagate_specials_as_ieee(special, device, split_path):
    """Inf and NaN come out where IEEE puts them, with its signs: including where a TF32-exact
    value (zero remainder before the split's 2**-126) meets an Inf, in a and in b."""
    b = torch.rand(64, 48, device=device) + 0.5
    a = torch.rand(40, 64, device=device)
    a[0, :] = 0
    a[0, 0] = special
    b[0, 2] = 1.0  # meets a[0, 0]
    a[1, 5], b[5, 7] = 1.0, -float("inf")  # an exact 1.0 times an Inf
    x3 = tritonmm.mm(a, b, input_precision="tf32x3")
    ieee = a.double() @ b.double()
    assert torch.equal(x3.isnan(), ieee.isnan()) and torch.equal(x3.isinf(), ieee.isinf())
    assert torch.equal(x3[x3.isinf()].sign(), ieee[ieee.isinf()].sign().float())


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_gpu_tf32x3_is_as_exact_as_sgemm(layout, path):
    """On tensor cores: far closer to float64 than TF32, and within 2x of cuBLAS SGEMM's error."""
    a, b = operands(512, 384, 1024, torch.float32, layout, "cuda")
    x3 = rel_err(tritonmm.mm(a, b, input_precision="tf32x3"), a, b)
    tf32 = rel_err(tritonmm.mm(a, b, input_precision="tf32"), a, b)
    flags = torch.backends.cuda.matmul
    saved = flags.fp32_precision
    try:
        flags.fp32_precision = "ieee"
        sgemm = rel_err(torch.mm(a, b), a, b)
    finally:
        flags.fp32_precision = saved
    assert x3 < 2 * sgemm and x3 < tf32 / 50


# FP8 products (tritonmm.scaled_mm) --------------------------------------------------------------
FP8 = [torch.float8_e4m3fn, torch.float8_e5m2]
# Hopper's FP8 tensor cores accumulate with fewer bits than fp32: float32 results were 5e-5 to
# 8e-5 from the float64 product at K <= 160 on the H100, so fp32 out is held to 2e-4.
OUT_BOUND = {torch.float32: 2e-4, torch.bfloat16: 1e-2, torch.float16: 2e-3}


def fp8_operands(M, N, K, device, dtypes=(torch.float8_e4m3fn, torch.float8_e4m3fn), b_layout="row"):
    """FP8 a (M, K) and b (K, N) from random floats; b row-major or a transposed view of (N, K)."""
    a = (torch.randn(M, K, device=device) * 4).to(dtypes[0])
    if b_layout == "row":
        return a, (torch.randn(K, N, device=device) * 4).to(dtypes[1])
    return a, (torch.randn(N, K, device=device) * 4).to(dtypes[1]).T


def scales(kind, M, N, device):
    if kind == "tensor":
        return torch.rand((), device=device) + 0.5, torch.rand((1,), device=device) + 0.5
    return torch.rand(M, 1, device=device) + 0.5, torch.rand(1, N, device=device) + 0.5


def dequantized_ref(a, b, sa, sb, bias=None):
    ref = (a.double() * sa.double()) @ (b.double() * sb.double())
    return ref if bias is None else ref + bias.double()


def frob(x, ref):
    if not torch.isfinite(x).all():
        return float("inf")
    return ((x.double() - ref).norm() / ref.norm()).item()


@pytest.mark.parametrize("out_dtype", list(OUT_BOUND), ids=str)
@pytest.mark.parametrize("kind", ["tensor", "row"])
@pytest.mark.parametrize("b_layout", ["row", "col"])
@pytest.mark.parametrize("shape", [(1, 16, 32), (33, 65, 48), (64, 48, 160)], ids=lambda s: "x".join(map(str, s)))
def test_scaled_mm_against_dequantized_float64(shape, b_layout, kind, out_dtype, device, path):
    M, N, K = shape
    a, b = fp8_operands(M, N, K, device, b_layout=b_layout)
    sa, sb = scales(kind, M, N, device)
    bias = torch.randn(N, device=device).bfloat16()
    y = tritonmm.scaled_mm(a, b, sa, sb, bias=bias, out_dtype=out_dtype)
    assert y.dtype == out_dtype and y.shape == (M, N)
    assert frob(y, dequantized_ref(a, b, sa, sb, bias)) < OUT_BOUND[out_dtype]


@pytest.mark.parametrize("kind", ["tensor", "row"])
def test_scaled_mm_one_row_kernel(kind, device):
    """A decode-shaped FP8 product (one row of a, b a transposed weight) on the one-row kernel, its
    scales and bias applied in the epilogue."""
    N = 8 * tritonmm.device.facts(torch.device(device)).num_sms + 5
    a, b = fp8_operands(1, N, 96, device, b_layout="col")
    sa, sb = scales(kind, 1, N, device)
    bias = torch.randn(N, device=device).bfloat16()
    from tritonmm import config_space, planner  # noqa: F401
    assert config_space.is_gemv(planner.chosen(a, b, "native", bias, scales=(sa, sb), out_dtype=torch.float32)[0])
    y = tritonmm.scaled_mm(a, b, sa, sb, bias=bias, out_dtype=torch.float32)
    assert frob(y, dequantized_ref(a, b, sa, sb, bias)) < OUT_BOUND[torch.float32]


@pytest.mark.parametrize("dtypes", [(torch.float8_e5m2, torch.float8_e4m3fn), (torch.float8_e4m3fn, torch.float8_e5m2),
                                    (torch.float8_e5m2, torch.float8_e5m2)], ids=str)
def test_scaled_mm_mixed_formats_and_scale_kinds(dtypes, device):
    a, b = fp8_operands(40, 24, 64, device, dtypes)
    sa, _ = scales("row", 40, 24, device)
    _, sb = scales("tensor", 40, 24, device)
    y = tritonmm.scaled_mm(a, b, sa, sb, out_dtype=torch.float32)
    assert frob(y, dequantized_ref(a, b, sa, sb)) < OUT_BOUND[torch.float32]


def test_quantize_fp8_then_scaled_mm(device):
    x, w = torch.randn(48, 96, device=device), torch.randn(40, 96, device=device)
    x[3] = 0  # an all-zero row gets a harmless scale
    (qa, sa), (qb, sb) = tritonmm.quantize_fp8(x, dim=1), tritonmm.quantize_fp8(w.T, dim=0)
    assert qa.dtype == torch.float8_e4m3fn and sa.shape == (48, 1) and sb.shape == (1, 40)
    assert torch.isfinite(sa).all() and (sa > 0).all()
    assert (qa.float().abs().amax(dim=1)[sa[:, 0] > 1e-30] == torch.finfo(torch.float8_e4m3fn).max).all()
    assert frob(qa.float() * sa, x.double()) < 0.05  # e4m3 keeps 3 mantissa bits
    y = tritonmm.scaled_mm(qa, qb, sa, sb, out_dtype=torch.float32)
    assert frob(y, x.double() @ w.double().T) < 0.06
    q, s = tritonmm.quantize_fp8(x * 1e4, torch.float8_e5m2)
    assert s.shape == () and q.dtype == torch.float8_e5m2 and torch.isfinite(q.float()).all()


@pytest.mark.parametrize("make, exc, words", [
    (lambda d: (torch.randn(4, 4, device=d), torch.randn(4, 4, device=d).to(FP8[0]), 1, 1), TypeError,
     ["a has dtype torch.float32", "quantize_fp8"]),
    (lambda d: (torch.randn(4, 8, device=d).to(FP8[0]), torch.randn(4, 4, device=d).to(FP8[0]), 1, 1), ValueError,
     ["inner dimensions"]),
    (lambda d: (torch.randn(4, 8, device=d).to(FP8[0]), torch.randn(8, 4, device=d).to(FP8[0]),
                torch.ones(4, 2, device=d), 1), ValueError, ["scale_a has shape (4, 2)", "(4, 1)"]),
    (lambda d: (torch.randn(4, 8, device=d).to(FP8[0]), torch.randn(8, 4, device=d).to(FP8[0]),
                torch.ones((), device=d), torch.ones(4, 1, device=d)), ValueError, ["scale_b has shape (4, 1)", "(1, 4)"]),
    (lambda d: (torch.randn(4, 8, device=d).to(FP8[0]), torch.randn(8, 4, device=d).to(FP8[0]),
                torch.ones((), device=d, dtype=torch.float16), 1), TypeError, ["scale_a", "float32", "scale_a.float()"]),
    (lambda d: (torch.randn(4, 8, device=d).to(FP8[0]), torch.randn(8, 4, device=d).to(FP8[0]), 1.0, 1), TypeError,
     ["scale_a must be a torch.Tensor"]),
])
def test_scaled_mm_bad_arguments(make, exc, words, device):
    a, b, sa, sb = make(device)
    sa = torch.ones((), device=device) if isinstance(sa, int) else sa
    sb = torch.ones((), device=device) if isinstance(sb, int) else sb
    with pytest.raises(exc) as info:
        tritonmm.scaled_mm(a, b, sa, sb)
    for w in words:
        assert w in str(info.value)


def test_scaled_mm_bad_out_dtype_and_bias(device):
    a, b = fp8_operands(4, 4, 16, device)
    one = torch.ones((), device=device)
    with pytest.raises(TypeError, match="out_dtype"):
        tritonmm.scaled_mm(a, b, one, one, out_dtype=torch.float8_e4m3fn)
    with pytest.raises(ValueError, match="bias has 5 elements"):
        tritonmm.scaled_mm(a, b, one, one, bias=torch.randn(5, device=device))
    with pytest.raises(TypeError, match="dtype must be"):
        tritonmm.quantize_fp8(torch.randn(4, 4), torch.float16)


def test_scaled_mm_refuses_gpus_without_fp8():
    from tritonmm import device as devices, validation
    with pytest.raises(ValueError, match="compute capability 8.9"):
        validation.check_fp8_support("cuda:0", devices.DeviceFacts("NVIDIA A100", 108, 166912, False, False))
    validation.check_fp8_support("cuda:0", devices.DeviceFacts("NVIDIA H100", 132, 232448, True, True))


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["tensor", "row"])
@pytest.mark.parametrize("shape", [(64, 48, 32), (256, 512, 1024), (4096, 4096, 4096)], ids=lambda s: "x".join(map(str, s)))
def test_gpu_scaled_mm_matches_torch_scaled_mm(shape, kind):
    """Where torch._scaled_mm takes the input (b column-major, sizes multiples of 16, bf16 out)."""
    M, N, K = shape
    a, b = fp8_operands(M, N, K, "cuda", b_layout="col")
    sa, sb = scales(kind, M, N, "cuda")
    if kind == "tensor":
        sa, sb = sa.reshape(()), sb.reshape(())
    ours = tritonmm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
    theirs = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)
    ref = dequantized_ref(a, b, sa, sb)
    assert frob(ours, ref) < 1e-2 and frob(ours, theirs.double()) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("special", [float("inf"), float("-inf"), float("nan")], ids=str)
def test_gpu_tf32x3_special_values_propagate_as_ieee(special, path):
    """Inf and NaN in an operand give what IEEE gives (the README's tf32x3 notes)."""
    b = torch.rand(64, 64, device="cuda") + 0.5
    a = torch.rand(64, 64, device="cuda")
    a[0, :] = 0
    a[0, 0] = special
    x3 = tritonmm.mm(a, b, input_precision="tf32x3")
    ieee = tritonmm.mm(a, b, input_precision="ieee")
    assert torch.equal(x3.isnan(), ieee.isnan()) and torch.equal(x3.isinf(), ieee.isinf())
    assert torch.equal(x3[x3.isinf()].sign(), ieee[ieee.isinf()].sign())
    assert torch.isfinite(x3[1:]).all()


@pytest.mark.gpu
def test_gpu_tf32x3_subnormals_get_tf32_precision(path):
    """Where tf32x3 is not IEEE: an operand below float32's normal range loses its remainder,
    so the product keeps TF32's precision (about 1e-3), not float32's."""
    a = torch.randn(128, 256, device="cuda") * 1e-39  # subnormal float32
    b = torch.randn(256, 96, device="cuda")
    err = rel_err(tritonmm.mm(a, b, input_precision="tf32x3"), a, b)
    assert err < 1e-2
    a = torch.randn(128, 256, device="cuda") * 1e-30  # small but normal, remainders too: float32 accuracy
    assert rel_err(tritonmm.mm(a, b, input_precision="tf32x3"), a, b) < 1e-5
