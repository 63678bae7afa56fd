"""Property-based tests (hypothesis): random shapes, dtypes, layouts and out= against float64.

Each example checks a call's whole contract, not only its numbers: the result within the
dtype's bound of a float64 product; the inputs, and the rest of the buffers they are views
of, unchanged bit for bit; out= (filled with NaN first) returned with every element written
and nothing written around it; a fresh result sharing no memory with the inputs. Sliced and
offset operands are views into NaN-filled buffers, so a kernel that reads outside a view
poisons its result.

Profiles: "cpu" (Triton's interpreter: sizes to 96, 200 examples a test, about 20 s for the
file on 2 cores) and "gpu" (sizes to 700, 300 examples); TRITONMM_HYPOTHESIS_PROFILE picks one,
else whether there is a GPU. No example database is
written into the repository: a failure prints the shrunk example and a @reproduce_failure blob.
"""
import math
import os
from typing import NamedTuple, Optional

import pytest
import torch
from conftest import HAS_GPU
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import tritonmm
from tritonmm import fast_launch, planner, product, relaunch, thresholds  # noqa: F401

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("cpu", max_examples=200, **_COMMON)
# Each new shape can compile new kernel specializations on the GPU (seconds each): fewer examples.
settings.register_profile("gpu", max_examples=60, **_COMMON)
PROFILE_NAME = os.environ.get("TRITONMM_HYPOTHESIS_PROFILE") or ("gpu" if HAS_GPU else "cpu")
PROFILE = settings.get_profile(PROFILE_NAME)
# The largest M, N, K drawn (batched products draw smaller ones: up to 9 of them run at once).
MAX_DIM = {"cpu": 96, "gpu": 700}[PROFILE_NAME]
MAX_BATCHED_DIM = {"cpu": 40, "gpu": 300}[PROFILE_NAME]

PRECISIONS = [(torch.float16, None), (torch.bfloat16, None), (torch.float32, "ieee"), (torch.float32, "tf32")]
BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2, "ieee": 1e-5, "tf32": 2e-3}
# row: contiguous; transposed: .T of a contiguous tensor; sliced: steps in both dims;
# offset: starts one element into a buffer (2 or 4 bytes off 16-byte alignment);
# expanded: one row read through a zero stride.
LAYOUTS = ["row", "transposed", "sliced", "offset", "expanded"]
# Half the draws are layouts the TMA path can read, which random layouts would rarely give.
layouts = st.sampled_from(["row", "transposed"]) | st.sampled_from(LAYOUTS)
ACTIVATIONS = [None, "relu", "gelu", "gelu_tanh", "silu"]
TORCH_ACT = {None: lambda z: z, "relu": torch.relu, "gelu": torch.nn.functional.gelu,
             "gelu_tanh": lambda z: torch.nn.functional.gelu(z, approximate="tanh"), "silu": torch.nn.functional.silu}


def sizes(top: int):
    """M, N, K in 0..top; half the time all multiples of 16, as the TMA path needs."""
    return (st.tuples(*[st.integers(0, top)] * 3)
            | st.tuples(*[st.integers(0, top // 16).map(lambda n: 16 * n)] * 3))


# Values come from a seeded generator: hypothesis draws and shrinks one seed, not thousands of floats.
seeds = st.integers(0, 2 ** 32 - 1)


class MmCase(NamedTuple):
    dtype: torch.dtype
    precision: Optional[str]
    M: int
    N: int
    K: int
    a_layout: str
    b_layout: str
    out: Optional[str]  # None, or the layout of a NaN-filled out=: "row", "transposed", "sliced"
    seed: int


@st.composite
def mm_cases(draw):
    dtype, precision = draw(st.sampled_from(PRECISIONS))
    M, N, K = draw(sizes(MAX_DIM))
    return MmCase(dtype, precision, M, N, K, draw(layouts), draw(layouts),
                  draw(st.sampled_from([None, "row", "transposed", "sliced"])), draw(seeds))


class MatmulCase(NamedTuple):
    dtype: torch.dtype
    precision: Optional[str]
    a_shape: tuple
    b_shape: tuple
    a_layout: str
    b_layout: str
    out: Optional[str]
    seed: int


@st.composite
def matmul_cases(draw):
    """Up to 2 broadcast batch dims of sizes 1..3; an operand without batch dims may be a vector."""
    dtype, precision = draw(st.sampled_from(PRECISIONS))
    M, N, K = draw(sizes(MAX_BATCHED_DIM))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))

    def operand_batch():  # the trailing dims of batch, each kept or broadcast from 1
        dims = batch[len(batch) - draw(st.integers(0, len(batch))):]
        return tuple(draw(st.sampled_from([n, 1])) for n in dims)

    a_batch, b_batch = operand_batch(), operand_batch()
    a_shape = (K,) if not a_batch and draw(st.booleans()) else (*a_batch, M, K)
    b_shape = (K,) if not b_batch and draw(st.booleans()) else (*b_batch, K, N)
    return MatmulCase(dtype, precision, a_shape, b_shape, draw(layouts), draw(layouts),
                      draw(st.sampled_from([None, "row", "transposed"])), draw(seeds))


class LinearCase(NamedTuple):
    dtype: torch.dtype
    precision: Optional[str]
    x_shape: tuple
    out_features: int
    x_layout: str
    w_layout: str
    bias: Optional[str]  # None, or the bias's layout
    activation: Optional[str]
    seed: int


@st.composite
def linear_cases(draw):
    dtype, precision = draw(st.sampled_from(PRECISIONS))
    M, N, K = draw(sizes(MAX_DIM))
    lead = draw(st.lists(st.integers(1, 3), max_size=1))
    return LinearCase(dtype, precision, (*lead, M, K), N, draw(layouts), draw(layouts),
                      draw(st.none() | layouts), draw(st.sampled_from(ACTIVATIONS)), draw(seeds))


def operand(shape, layout: str, dtype, device, gen: torch.Generator) -> torch.Tensor:
    """A random tensor of ``shape`` (a vector, or matrices with any batch dims) in ``layout``."""
    if len(shape) == 1:
        return operand((1, *shape), layout, dtype, device, gen)[0]
    *batch, rows, cols = shape

    def rand(*size):
        return torch.randn(size, generator=gen).to(dtype).to(device)

    def nan(*size):
        return torch.full(size, float("nan"), dtype=dtype, device=device)

    if layout == "transposed":
        return rand(*batch, cols, rows).transpose(-1, -2)
    if layout == "expanded":
        return rand(*batch, 1, cols).expand(shape)
    if layout == "sliced":
        return nan(*batch, 2 * rows, 3 * cols + 1)[..., ::2, 1::3].copy_(rand(*shape))
    if layout == "offset":
        return nan(math.prod(shape) + 2)[1:-1].view(shape).copy_(rand(*shape))
    return rand(*shape)


def make_out(shape, kind, dtype, device):
    """None, or a NaN-filled out= of ``shape``: contiguous, a transposed view, or a view of
    every other column of a wider buffer."""
    if kind is None:
        return None
    full = lambda *size: torch.full(size, float("nan"), dtype=dtype, device=device)  # noqa: E731
    if kind == "transposed" and len(shape) >= 2:
        return full(*shape[:-2], shape[-1], shape[-2]).transpose(-1, -2)
    if kind == "sliced":
        return full(*shape[:-1], 2 * shape[-1])[..., ::2]
    return full(*shape)


def storage(t: torch.Tensor, dtype=None) -> torch.Tensor:
    """All of t's buffer as a flat tensor (as raw bytes by default), not only t's view of it."""
    return torch.empty(0, dtype=dtype or torch.uint8, device=t.device).set_(t.untyped_storage())


def around(t: torch.Tensor) -> torch.Tensor:
    """The elements of t's buffer that t's view does not cover."""
    covered = torch.zeros(storage(t, t.dtype).numel(), dtype=torch.bool, device=t.device)
    covered.as_strided(t.shape, t.stride(), t.storage_offset()).fill_(True)
    return storage(t, t.dtype)[~covered]


def shares_memory(x: torch.Tensor, y: torch.Tensor) -> bool:
    sx, sy = x.untyped_storage(), y.untyped_storage()
    return sx.nbytes() > 0 and sy.nbytes() > 0 and sx.data_ptr() == sy.data_ptr()


def check_call(call, inputs, out, ref, scale, K, bound):
    """Runs call() and checks its contract (module docstring) against ``ref``, computed in float64.

    The error bound is relative to the result's norm, except where the sum cancels: rounding
    errors grow with the magnitudes summed, ``scale`` (|a| @ |b|, plus |bias|), and a sum of K
    terms of random signs is about sqrt(K) smaller than that. Where scale is 0 (K = 0, no bias)
    the result must be exactly the reference.
    """
    inputs = [t for t in inputs if t is not None]
    before = [storage(t).clone() for t in inputs]
    result = call()
    assert result.shape == ref.shape and result.dtype == inputs[0].dtype
    for i, (t, saved) in enumerate(zip(inputs, before)):
        assert torch.equal(storage(t), saved), f"input {i} (or the buffer around it) was modified"
    if out is None:
        assert not any(shares_memory(result, t) for t in inputs), "the result shares memory with an input"
    else:
        assert result is out, "out= was not returned"
        assert around(out).isnan().all(), "an element beside out's view was written"
    assert not result.isnan().any(), "NaN in the result: an element never written, or a read outside a view"
    err = (result.double() - ref).norm().item()
    limit = bound * max(ref.norm().item(), scale.norm().item() / math.sqrt(max(K, 1)))
    assert err <= limit, f"error {err:.3g} > {limit:.3g}"


def bound(dtype, precision):
    return BOUND[precision if dtype == torch.float32 else dtype]


def check_mm(a, b, out, precision=None):
    """The mm property for one pair of operands (and out= or None)."""
    a64, b64 = a.double(), b.double()
    check_call(lambda: tritonmm.mm(a, b, out=out, input_precision=precision), [a, b], out,
               a64 @ b64, a64.abs() @ b64.abs(), a.shape[1], bound(a.dtype, precision))


def run_mm(case: MmCase, device):
    gen = torch.Generator().manual_seed(case.seed)
    a = operand((case.M, case.K), case.a_layout, case.dtype, device, gen)
    b = operand((case.K, case.N), case.b_layout, case.dtype, device, gen)
    check_mm(a, b, make_out((case.M, case.N), case.out, case.dtype, device), case.precision)


@PROFILE
@given(case=mm_cases())
def test_mm(case, device, path):
    run_mm(case, device)


@PROFILE
@given(case=matmul_cases())
def test_matmul(case, device, path):
    gen = torch.Generator().manual_seed(case.seed)
    a = operand(case.a_shape, case.a_layout, case.dtype, device, gen)
    b = operand(case.b_shape, case.b_layout, case.dtype, device, gen)
    a64, b64 = a.double(), b.double()
    ref = a64 @ b64
    out = make_out(tuple(ref.shape), case.out, case.dtype, device)
    check_call(lambda: tritonmm.matmul(a, b, out=out, input_precision=case.precision), [a, b], out,
               ref, a64.abs() @ b64.abs(), a.shape[-1], bound(case.dtype, case.precision))


# The interpreter's numpy exp overflows to inf in the sigmoid of a large negative input, which
# still gives the right 0.
@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")
@PROFILE
@given(case=linear_cases())
def test_linear(case, device, path):
    gen = torch.Generator().manual_seed(case.seed)
    x = operand(case.x_shape, case.x_layout, case.dtype, device, gen)
    K = case.x_shape[-1]
    w = operand((case.out_features, K), case.w_layout, case.dtype, device, gen)
    bias = None if case.bias is None else operand((case.out_features,), case.bias, case.dtype, device, gen)
    x64, w64 = x.double(), w.double()
    b64 = torch.zeros(case.out_features, dtype=torch.float64, device=device) if bias is None else bias.double()
    ref = TORCH_ACT[case.activation](x64 @ w64.T + b64)
    check_call(lambda: tritonmm.linear(x, w, bias, case.activation, input_precision=case.precision),
               [x, w, bias], None, ref, x64.abs() @ w64.abs().T + b64.abs(), K, bound(case.dtype, case.precision))


def minimal_failing_mm_case(device, what: str, capsys):
    """The smallest mm example the property fails on, searched and shrunk by hypothesis
    (derandomized: the same search every run, so the mutation tests cannot flake)."""
    def fails(case):
        try:
            run_mm(case, device)
        except AssertionError:
            return True
        return False

    found = find(mm_cases(), fails, settings=settings(PROFILE, derandomize=True))
    with capsys.disabled():
        print(f"\nthe {what} fails on {found}")
    return found


def test_properties_catch_a_broken_kernel(device, monkeypatch, capsys):
    """The mm property fails on a kernel whose store drops the last row when it is alone in its
    16-row tile (an off-by-one in an edge mask), left as fresh memory often is: zeros. Hypothesis
    finds it within the property test's budget and shrinks it to a minimal shape."""
    real = planner.product
    # Every call through planner.product: a relaunch from the launch cache would skip the mutation.
    monkeypatch.setitem(fast_launch._state, "enabled", False)

    def broken(a, b, **kwargs):
        out = real(a, b, **kwargs)
        if out.shape[-2] % 16 == 1 and a.shape[-1] > 0:  # K = 0 launches no kernel
            out[..., -1, :] = 0
        return out

    monkeypatch.setattr(planner, "product", broken)
    found = minimal_failing_mm_case(device, "broken kernel", capsys)
    assert found.M % 16 == 1 and found.N > 0 and found.K > 0
    monkeypatch.setattr(planner, "product", real)
    run_mm(found, device)  # and the real kernel passes the same example


def test_properties_catch_a_mutated_kernel(device, monkeypatch, tmp_path, capsys):
    """A real kernel mutation, not a wrapper: the pointer kernel's source with its K loop one
    step short (K // BLOCK_K steps instead of tl.cdiv(K, BLOCK_K)), so the partial last K step
    is dropped, an off-by-one that passes every K that is a multiple of BLOCK_K."""
    import importlib.util
    import inspect

    from tritonmm.kernels import gemm
    source = inspect.getsource(gemm)
    assert source.count("tl.cdiv(K, BLOCK_K)") == 1
    mutated = source.replace("tl.cdiv(K, BLOCK_K)", "K // BLOCK_K").replace(
        "from .tiles import", "from tritonmm.kernels.tiles import")
    file = tmp_path / "mutated_gemm.py"
    file.write_text(mutated)
    spec = importlib.util.spec_from_file_location("mutated_gemm", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(product, "gemm_kernel", module.gemm_kernel)
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))  # the mutation is in the pointer kernel
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    monkeypatch.setattr(relaunch, "_entries", {})  # no relaunch of a kernel compiled from the real source
    found = minimal_failing_mm_case(device, "mutated kernel", capsys)
    assert found.K > 0 and found.M > 0 and found.N > 0
    monkeypatch.setattr(product, "gemm_kernel", gemm.gemm_kernel)
    monkeypatch.setattr(relaunch, "_entries", {})
    run_mm(found, device)  # and the real kernel passes the same example
