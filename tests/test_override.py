"""tritonmm.enable/disable/use_tritonmm: aten mm, addmm and bmm (and their out= overloads) routed to tritonmm.

The override registers for the CUDA dispatch key, and in Triton's interpreter (these tests without a
GPU) for the CPU key too, so the routing tests run on either device, counting tritonmm's launches
through planner.product. On a GPU, where nothing is interpreted, CPU products stay on aten.
"""
import subprocess
import sys
import warnings
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import tritonmm
from tritonmm import override, planner, routing

# Relative Frobenius bounds against float64; fp32 allows for TF32, which torch may have on.
BOUND = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 2e-3}


@pytest.fixture(autouse=True)
def aten_restored():
    """Every test starts and ends with aten's own kernels, whatever it left enabled."""
    tritonmm.disable()
    yield
    tritonmm.disable()


@pytest.fixture
def product():
    """planner.product wrapped in a call counter; the override calls it through the module attribute."""
    with mock.patch.object(planner, "product", wraps=planner.product) as counted:
        yield counted


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


def randn(*shape, dtype=torch.float32, device="cpu"):
    return torch.randn(*shape, device=device).to(dtype)


def test_enable_warns_nothing():
    """Enabling replaces aten's CUDA kernels on purpose: no warning about it (torch 2.11-2.12 gave one, once a
    process, so a fresh process checks)."""
    code = ("import warnings, tritonmm; warnings.simplefilter('error'); tritonmm.enable(); tritonmm.disable(); "
            "tritonmm.enable(); print('ok')")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_enable_disable_state():
    assert not override.enabled()
    tritonmm.enable()
    tritonmm.enable()  # a second enable is harmless, and not counted
    assert override.enabled()
    tritonmm.disable()
    assert not override.enabled()
    tritonmm.disable()  # as is a second disable
    assert not override.enabled()


def test_use_tritonmm_nests_and_restores():
    with tritonmm.use_tritonmm():
        assert override.enabled()
        with tritonmm.use_tritonmm():
            assert override.enabled()
        assert override.enabled()  # the inner block leaves the outer one's state
    assert not override.enabled()

    tritonmm.enable()
    with tritonmm.use_tritonmm():
        assert override.enabled()
    assert override.enabled()  # enabled before the block, so still after it


def test_use_tritonmm_restores_on_exception():
    with pytest.raises(RuntimeError, match="inside"):
        with tritonmm.use_tritonmm():
            raise RuntimeError("inside")
    assert not override.enabled()


@pytest.mark.parametrize("dtype", list(BOUND), ids=str)
def test_products_route_to_tritonmm(dtype, product, device):
    a, b, bias = randn(65, 129, dtype=dtype, device=device), randn(129, 33, dtype=dtype, device=device), \
        randn(33, dtype=dtype, device=device)
    batch_a, batch_b = randn(3, 17, 40, dtype=dtype, device=device), randn(3, 40, 24, dtype=dtype, device=device)
    a64, b64, bias64 = a.double(), b.double(), bias.double()
    cases = {  # name: (call, float64 reference)
        "mm": (lambda: torch.mm(a, b), a64 @ b64),
        "addmm": (lambda: torch.addmm(bias, a, b), a64 @ b64 + bias64),
        "bmm": (lambda: torch.bmm(batch_a, batch_b), batch_a.double() @ batch_b.double()),
        "linear": (lambda: F.linear(a, b.T, bias), a64 @ b64 + bias64),
        "matmul": (lambda: torch.matmul(batch_a, batch_b[0]), batch_a.double() @ batch_b[0].double()),
    }
    with tritonmm.use_tritonmm():
        for name, (call, ref) in cases.items():
            before = product.call_count
            out = call()
            assert product.call_count > before, f"{name} did not run on tritonmm"
            assert out.dtype == dtype
            assert rel(out, ref) < BOUND[dtype], name
    after_block = product.call_count
    for call, _ in cases.values():
        call()
    assert product.call_count == after_block  # aten's own kernels again


def test_backward_products_route_to_tritonmm(product, device):
    """The override sits below autograd: aten's derivative formulas call mm, which lands here."""
    a = torch.randn(40, 24, device=device, requires_grad=True)
    b = torch.randn(24, 16, device=device, requires_grad=True)
    with tritonmm.use_tritonmm():
        out = torch.mm(a, b)
        forward = product.call_count
        out.backward(torch.ones_like(out))
    assert forward == 1 and product.call_count == 3  # dA and dB too
    ones = torch.ones(40, 16, device=device, dtype=torch.float64)
    assert rel(a.grad, ones @ b.detach().double().T) < BOUND[torch.float32]
    assert rel(b.grad, a.detach().double().T @ ones) < BOUND[torch.float32]


def test_float64_falls_back_to_aten(product, device):
    a = torch.randn(33, 65, device=device, dtype=torch.float64)
    b = torch.randn(65, 17, device=device, dtype=torch.float64)
    aten = torch.mm(a, b)
    with tritonmm.use_tritonmm():
        out = torch.mm(a, b)
    assert product.call_count == 0
    assert torch.equal(out, aten)  # aten's own kernel, so bit for bit
    torch.testing.assert_close(out.cpu(), a.cpu() @ b.cpu())


def test_addmm_with_beta_falls_back_to_aten(product, device):
    """tritonmm's epilogue adds the bias as it is: beta != 1 goes to aten's kernel."""
    bias = torch.randn(33, device=device)
    a = torch.randn(65, 40, device=device)
    b = torch.randn(40, 33, device=device)
    aten = torch.addmm(bias, a, b, beta=0.5)
    with tritonmm.use_tritonmm():
        out = torch.addmm(bias, a, b, beta=0.5)
    assert product.call_count == 0
    assert torch.equal(out, aten)


@pytest.mark.gpu
def test_gpu_cpu_products_stay_on_aten(product):
    """Outside the interpreter the override registers for CUDA only: CPU products are aten's, bit for bit."""
    a, b, bias = torch.randn(17, 33), torch.randn(33, 9), torch.randn(9)
    batch_a, batch_b = torch.randn(3, 5, 7), torch.randn(3, 7, 4)

    def products():
        return torch.mm(a, b), torch.addmm(bias, a, b), torch.bmm(batch_a, batch_b)

    before = products()
    with tritonmm.use_tritonmm():
        inside = products()
    assert product.call_count == 0
    for ref, x in zip(before, inside):
        assert torch.equal(x, ref)


# out= overloads: what torch.compile'd code calls (extern_kernels.mm(a, b, out=buf)).

def _out_cases(dtype, device):
    """name: (operator, its inputs, the result's shape, float64 reference). Odd sizes, none square."""
    a, b, bias = randn(37, 53, dtype=dtype, device=device), randn(53, 19, dtype=dtype, device=device), \
        randn(19, dtype=dtype, device=device)
    batch_a, batch_b = randn(3, 11, 29, dtype=dtype, device=device), randn(3, 29, 7, dtype=dtype, device=device)
    return {
        "mm": (torch.mm, (a, b), (37, 19), a.double() @ b.double()),
        "addmm": (torch.addmm, (bias, a, b), (37, 19), a.double() @ b.double() + bias.double()),
        "bmm": (torch.bmm, (batch_a, batch_b), (3, 11, 7), batch_a.double() @ batch_b.double()),
    }


# How torch.compile'd code may pass out=: row-major, its last two dims transposed, or a slice of a wider
# buffer (inductor writes a product straight into its place in a concatenation). layout: (the buffer's
# shape for a result of shape s, the view of the buffer that is out).
LAYOUTS = {
    "row": (lambda s: s, lambda buf: buf),
    "transposed": (lambda s: (*s[:-2], s[-1], s[-2]), lambda buf: buf.mT),
    "slice": (lambda s: (*s[:-1], s[-1] + 5), lambda buf: buf[..., 2:-3]),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", list(BOUND), ids=str)
@pytest.mark.parametrize("name", ["mm", "addmm", "bmm"])
def test_out_overloads_route_to_tritonmm(name, dtype, layout, product, device):
    op, inputs, shape, ref = _out_cases(dtype, device)[name]
    buffer_shape, view = LAYOUTS[layout]
    buffer = torch.full(buffer_shape(shape), float("nan"), dtype=dtype, device=device)
    out = view(buffer)
    covered = torch.zeros(buffer.shape, dtype=torch.bool, device=device)
    view(covered).fill_(True)
    with tritonmm.use_tritonmm():
        result = op(*inputs, out=out)
    assert product.call_count == 1, f"{name}.out did not run on tritonmm"
    assert result.data_ptr() == out.data_ptr() and result.stride() == out.stride()
    assert rel(out, ref) < BOUND[dtype]
    assert buffer[~covered].isnan().all()  # nothing written outside out


def _torch_does(call):
    """What a call does: ("result", tensor) or ("raises", the error's type)."""
    try:
        return "result", call()
    except RuntimeError as error:
        return "raises", type(error)


def _beside_a(bias, a, b):
    """a and out side by side in one buffer: the same memory, not overlapping (what tritonmm leaves to
    aten is any out= sharing an input's memory; aten computes this one as usual)."""
    buffer = torch.empty(a.shape[0], a.shape[1] + b.shape[1], device=a.device, dtype=a.dtype)
    buffer[:, :a.shape[1]] = a
    return bias, buffer[:, :a.shape[1]], b, buffer[:, a.shape[1]:]


def _with_out(make_out):
    return lambda bias, a, b: (bias, a, b, make_out(a))


# case: (the inputs (bias, a, b) and out= to call with, made from fresh inputs; extra arguments; dtype).
# Each goes to aten.
UNUSUAL_OUT = {
    "resized": (_with_out(lambda a: torch.empty(0, device=a.device)), {}, torch.float32),  # aten resizes it
    "other dtype": (_with_out(lambda a: torch.empty(9, 6, device=a.device, dtype=torch.float16)), {}, torch.float32),
    "shares a's memory": (_beside_a, {}, torch.float32),
    "overlapping": (_with_out(lambda a: torch.empty(6, device=a.device).expand(9, 6)), {}, torch.float32),
    "float64": (_with_out(lambda a: torch.empty(9, 6, device=a.device, dtype=torch.float64)), {}, torch.float64),
    "beta": (_with_out(lambda a: torch.empty(9, 6, device=a.device)), {"beta": 0.5}, torch.float32),
}


@pytest.mark.parametrize("case", list(UNUSUAL_OUT))
def test_out_overloads_hand_the_unusual_to_aten(case, product, device):
    """An out= tritonmm would not write as torch does goes to aten, which resizes, raises or computes
    exactly as without the override."""
    prepare, kwargs, dtype = UNUSUAL_OUT[case]
    values = (randn(6, dtype=dtype, device=device), randn(9, 13, dtype=dtype, device=device),
              randn(13, 6, dtype=dtype, device=device))
    for op in (torch.mm, torch.addmm):
        if kwargs and op is torch.mm:
            continue  # beta is addmm's

        def call():
            bias, a, b, out = prepare(*(t.clone() for t in values))
            return op(*((bias,) if op is torch.addmm else ()), a, b, out=out, **kwargs)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # aten's own resize warning, the same either way
            expected = _torch_does(call)
            with tritonmm.use_tritonmm():
                got = _torch_does(call)
        assert product.call_count == 0, f"{op.__name__}.out, {case}"
        assert got[0] == expected[0]
        assert got[1] is expected[1] if got[0] == "raises" else torch.equal(got[1], expected[1])


@pytest.mark.parametrize("shapes, dims, takes", [
    (((4, 8), (8, 5)), 2, True),
    (((4, 8), (10, 5)), 2, False),  # inner sizes differ
    (((3, 4, 8), (3, 8, 5)), 2, False),  # a 3-D mm
    (((3, 4, 8), (3, 8, 5)), 3, True),
    (((3, 4, 8), (2, 8, 5)), 3, False),  # batch sizes differ
    (((8,), (8, 5)), 2, False),
])
def test_override_hands_what_aten_rejects_back_to_aten(shapes, dims, takes):
    """tritonmm's kernels never see shapes aten would reject (they would read out of bounds):
    aten gets them, and raises its own error."""
    a, b = (torch.empty(s, device="meta") for s in shapes)
    assert routing.shapes_ok(a, b, dims) is takes
