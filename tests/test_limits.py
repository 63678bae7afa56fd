"""Limits: operands and results past 2**31 elements, K of 1, very long K, Inf and NaN.

Each case must come out right (or, where it cannot, raise a clear error). The large ones need
real GPU memory (up to about 6 GB) and skip where less is free; the cheap ones run in the
interpreter as well. A product past 2**31 elements is checked on sampled rows and columns
against float64 computed from those rows and columns only, never a full float64 reference.
"""
import gc
import math

import pytest
import torch
from conftest import HAS_GPU, rel_err

import tritonmm
from tritonmm.precision import resolve_precision
from tritonmm.product import Product
from tritonmm.tune import operands
from tritonmm.validation import interpreting

BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 1e-5}  # float32 as "ieee"
DTYPES = [torch.float16, torch.bfloat16, torch.float32]
# The interpreter computes with numpy, which warns where a value overflows to Inf or becomes
# NaN: here that is the point.
NUMPY_IEEE_WARNINGS = pytest.mark.filterwarnings("ignore:(overflow|invalid value) encountered:RuntimeWarning")


@pytest.fixture(autouse=True)
def free_memory():
    """Hands a test's GPU memory back before the next test allocates its own."""
    yield
    if HAS_GPU:
        gc.collect()
        torch.cuda.empty_cache()


def need_gpu_memory(nbytes: int):
    free, _ = torch.cuda.mem_get_info()
    if free < nbytes:
        pytest.skip(f"needs {nbytes / 2 ** 30:.1f} GiB of free GPU memory, {free / 2 ** 30:.1f} GiB free")


def long_k_bound(dtype, K: int) -> float:
    """The dtype's bound, or what K roundings of one fp32 running sum add up to, whichever is
    larger: they grow as sqrt(K) * 2**-24 relative (a random walk), 1.2e-4 at K = 2**22 (a
    float32 simulation of such sums gave 6e-5), past the 1e-5 of fp32's short sums."""
    return max(BOUND[dtype], 4 * math.sqrt(K) * 2 ** -24)


def precision(dtype):
    return "ieee" if dtype == torch.float32 else None


def path_of(a, b, out):
    return Product(a, b, out, resolve_precision(a.dtype, precision(a.dtype))).path


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("M, N, layout", [(64, 48, "TN"), (33, 65, "NN"), (1, 1, "NN"), (70, 1, "NT")])
def test_k_of_one_is_exact(M, N, layout, dtype, device, path):
    """With K = 1 each element is one product, exact in fp32, rounded once to the output dtype:
    bit for bit the float64 product rounded. A transposed (M, 1) view and a (1, N) row have
    16-byte aligned rows when M and N are multiples of 16, so K = 1 reaches the TMA path too."""
    a, b = operands(M, N, 1, dtype, layout, device)
    out = torch.full((M, N), float("nan"), dtype=dtype, device=device)
    tritonmm.mm(a, b, out=out, input_precision=precision(dtype))
    exact = a.double() @ b.double()
    if dtype == torch.bfloat16 and interpreting():
        # Triton's interpreter casts fp32 to bf16 toward zero (the GPU rounds to nearest even):
        # clearing the 16 low bits of the fp32 value is that cast.
        assert torch.equal(out, (exact.float().view(torch.int32) & -2 ** 16).view(torch.float32).to(dtype))
    else:
        assert torch.equal(out, exact.to(dtype))
    if layout == "TN":
        assert path_of(a, b, out) == path


@NUMPY_IEEE_WARNINGS
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_inf_times_zero_is_nan_like_torch(dtype, device, path):
    """Inf * 0 is NaN and Inf * x is +-Inf, as in torch's IEEE arithmetic. The Inf at k = 39
    sits in the last, partial K step, where the pointer kernel masks its loads and TMA
    zero-fills; the one at k = 0 in the first."""
    M, N, K = 32, 48, 40
    a, b = operands(M, N, K, dtype, "NN", device)
    a[5, K - 1] = float("inf")
    b[K - 1, 7] = 0.0  # out[5, 7] = Inf * 0
    a[9, 0] = float("-inf")
    b[0, 3] = 0.0  # out[9, 3] = -Inf * 0
    out = tritonmm.mm(a, b, input_precision=precision(dtype))
    ref = a.double() @ b.double()
    assert torch.isnan(out[5, 7]) and torch.isnan(out[9, 3])
    for kind in (torch.isnan, torch.isposinf, torch.isneginf):
        assert torch.equal(kind(out), kind(ref)), kind.__name__
    finite = torch.isfinite(ref)
    assert finite.sum() == (M - 2) * N
    assert ((out.double()[finite] - ref[finite]).norm() / ref[finite].norm()).item() < BOUND[dtype]
    assert path_of(a, b, out) == path


# Operand magnitudes s whose products s * s overflow: in the cast to fp16 (64 * 64 * 48 =
# 196608 > 65504), already in the fp32 accumulator for bf16 and fp32 (2**64 * 2**64 = 2**128).
OVERFLOW_SCALE = {torch.float16: 64.0, torch.bfloat16: 2.0 ** 64, torch.float32: 2.0 ** 64}


@NUMPY_IEEE_WARNINGS
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_overflow_to_inf_like_torch_mm(dtype, device, path):
    """Sums past the dtype's range come out +-Inf, as torch.mm's do, and the ones next to them
    stay finite. Every row of a and column of b is constant (1, s or -s), so each sum is
    r_i * c_j * K, exact, and the result is compared bit for bit."""
    M, N, K = 32, 48, 48
    s = OVERFLOW_SCALE[dtype]
    r = torch.tensor([1.0, s, -s, 1.0] * (M // 4), device=device)
    c = torch.tensor([1.0, s, -s] * (N // 3), device=device)
    a = r[:, None].expand(M, K).to(dtype).contiguous()
    b = c[None, :].expand(K, N).to(dtype).contiguous()
    out = tritonmm.mm(a, b, input_precision=precision(dtype))
    assert torch.isposinf(out).any() and torch.isneginf(out).any() and torch.isfinite(out).any()
    assert torch.equal(out, torch.mm(a, b))
    assert torch.equal(out, (a.double() @ b.double()).to(dtype))
    assert path_of(a, b, out) == path


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_long_k(dtype, device, path):
    """8 x 8 x 4096: one tile walks K in 64 or more steps (the interpreter's size of huge K)."""
    a, b = operands(8, 8, 4096, dtype, "NN", device)
    out = tritonmm.mm(a, b, input_precision=precision(dtype))
    assert rel_err(out, a, b) < long_k_bound(dtype, 4096)
    assert path_of(a, b, out) == path


def sample(n: int, *extra: int) -> torch.Tensor:
    """Indices spread over range(n) (a prime step, so no one position in a tile is favoured),
    the last three, and ``extra``."""
    picked = torch.cat([torch.arange(0, n, 4099), torch.arange(n - 3, n), torch.tensor(extra, dtype=torch.long)])
    return picked.unique().cuda()


def rand_bf16(rows, cols, transposed=False):
    """Made in bf16 directly: no float32 copy of a 4 GB operand."""
    if transposed:
        return torch.randn(cols, rows, dtype=torch.bfloat16, device="cuda").T
    return torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")


# (M, N, K, A transposed, B transposed): one operand of more than 2**31 elements (4.3 GB of bf16),
# by where the kernel's offsets into it pass 2**31. K = 65 puts a K step at k = 64, past 2**31
# with the row strides of 2**25 + 8 (63 of them are less). The layouts keep every row 16-byte
# aligned, so the TMA path can take each product too.
PAST_2_31 = {
    "A-row-index": (2 ** 25 + 1, 8, 64, False, False),  # A's last row starts at element 2**31
    "A-k-steps": (2 ** 25 + 8, 8, 65, True, False),  # a column-major A: k * M
    "B-k-steps": (16, 2 ** 25 + 8, 65, True, False),  # a row-major B: k * N
    "B-column-index": (16, 2 ** 25 + 8, 64, False, True),  # a column-major B: n * K
}


@pytest.mark.gpu
@pytest.mark.parametrize("case", PAST_2_31)
def test_gpu_operand_past_2_31_elements(case, path):
    """Checked on rows of C (A the large operand) or columns (B), each from float64 of its own row
    of A or column of B: every sampled row or column reads elements past 2**31."""
    M, N, K, a_t, b_t = PAST_2_31[case]
    need_gpu_memory((M * K + K * N + M * N) * 2 + 2 ** 30)
    a, b = rand_bf16(M, K, a_t), rand_bf16(K, N, b_t)
    out = tritonmm.mm(a, b)
    if a.numel() > b.numel():
        rows = sample(M)
        err = rel_err(out[rows], a[rows], b)
    else:
        cols = sample(N)
        err = rel_err(out[:, cols], a, b[:, cols])
    taken = path_of(a, b, out)
    del a, b, out
    assert taken == path
    assert err < BOUND[torch.bfloat16]


@pytest.mark.gpu
def test_gpu_c_past_2_31_elements(path):
    """C of (46341, 46344) bf16 from K = 16: 2**31 + 143656 elements (4.3 GB)."""
    M, N, K = 46341, 46344, 16
    need_gpu_memory(M * N * 2 + 2 ** 30)
    a, b = rand_bf16(M, K), rand_bf16(K, N)
    out = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    tritonmm.mm(a, b, out=out)
    first_past = 2 ** 31 // N  # the row that holds element 2**31
    rows, cols = sample(M, first_past, first_past + 1), sample(N, 2 ** 31 % N)
    row_err, col_err = rel_err(out[rows], a[rows], b), rel_err(out[:, cols], a, b[:, cols])
    taken = path_of(a, b, out)
    del out
    assert taken == path
    assert row_err < BOUND[torch.bfloat16] and col_err < BOUND[torch.bfloat16]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_gpu_huge_k(dtype, path):
    """16 x 16 x 2**22: a single tile walks all of K, in one fp32 running sum."""
    K = 2 ** 22
    need_gpu_memory(2 * 16 * K * 4 + 2 ** 30)
    a, b = operands(16, 16, K, dtype, "NN", "cuda")
    out = tritonmm.mm(a, b, input_precision=precision(dtype))
    err, taken = rel_err(out, a, b), path_of(a, b, out)
    del a, b
    assert taken == path
    assert err < long_k_bound(dtype, K)
