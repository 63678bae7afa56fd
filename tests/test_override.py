"""tritonmm.enable/disable/use_tritonmm: aten mm, addmm and bmm on CUDA tensors routed to tritonmm.

The override registers for the CUDA dispatch key only, so on the CPU these tests check its
state (enabling, disabling, nesting) and that CPU products never leave aten; the routing
itself is checked on a GPU, counting tritonmm's launches through plan.product.
"""
import subprocess
import sys
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import tritonmm
from tritonmm import override, plan

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
    """plan.product wrapped in a call counter; the override calls it through the module attribute."""
    with mock.patch.object(plan, "product", wraps=plan.product) as counted:
        yield counted


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).norm() / ref.norm()).item()


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


def test_cpu_products_stay_on_aten():
    """CPU tensors never reach tritonmm, enabled or not: results are aten's, bit for bit."""
    a, b, bias = torch.randn(17, 33), torch.randn(33, 9), torch.randn(9)
    batch_a, batch_b = torch.randn(3, 5, 7), torch.randn(3, 7, 4)

    def products():
        return torch.mm(a, b), torch.addmm(bias, a, b), torch.bmm(batch_a, batch_b)

    before = products()
    with tritonmm.use_tritonmm():
        inside = products()
    after = products()
    for ref, x, y in zip(before, inside, after):
        assert torch.equal(x, ref) and torch.equal(y, ref)
    assert rel(before[0], a.double() @ b.double()) < 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(BOUND), ids=str)
def test_gpu_products_route_to_tritonmm(dtype, product):
    a = torch.randn(65, 129, device="cuda").to(dtype)
    b = torch.randn(129, 33, device="cuda").to(dtype)
    bias = torch.randn(33, device="cuda").to(dtype)
    batch_a = torch.randn(3, 17, 40, device="cuda").to(dtype)
    batch_b = torch.randn(3, 40, 24, device="cuda").to(dtype)
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


@pytest.mark.gpu
def test_gpu_backward_products_route_to_tritonmm(product):
    """The override sits below autograd: aten's derivative formulas call mm, which lands here."""
    a = torch.randn(40, 24, device="cuda", requires_grad=True)
    b = torch.randn(24, 16, device="cuda", requires_grad=True)
    with tritonmm.use_tritonmm():
        out = torch.mm(a, b)
        forward = product.call_count
        out.backward(torch.ones_like(out))
    assert forward == 1 and product.call_count == 3  # dA and dB too
    ones = torch.ones(40, 16, device="cuda", dtype=torch.float64)
    assert rel(a.grad, ones @ b.detach().double().T) < BOUND[torch.float32]
    assert rel(b.grad, a.detach().double().T @ ones) < BOUND[torch.float32]


@pytest.mark.gpu
def test_gpu_float64_falls_back_to_aten(product):
    a = torch.randn(33, 65, device="cuda", dtype=torch.float64)
    b = torch.randn(65, 17, device="cuda", dtype=torch.float64)
    aten = torch.mm(a, b)
    with tritonmm.use_tritonmm():
        out = torch.mm(a, b)
    assert product.call_count == 0
    assert torch.equal(out, aten)  # aten's own cuBLAS kernel, so bit for bit
    torch.testing.assert_close(out.cpu(), a.cpu() @ b.cpu())


@pytest.mark.gpu
def test_gpu_addmm_with_beta_falls_back_to_aten(product):
    """tritonmm's epilogue adds the bias as it is: beta != 1 goes to aten's kernel."""
    bias = torch.randn(33, device="cuda")
    a = torch.randn(65, 40, device="cuda")
    b = torch.randn(40, 33, device="cuda")
    aten = torch.addmm(bias, a, b, beta=0.5)
    with tritonmm.use_tritonmm():
        out = torch.addmm(bias, a, b, beta=0.5)
    assert product.call_count == 0
    assert torch.equal(out, aten)


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
    from tritonmm import override
    a, b = (torch.empty(s, device="meta") for s in shapes)
    assert override.shapes_ok(a, b, dims) is takes
