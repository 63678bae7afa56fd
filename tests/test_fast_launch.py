"""Relaunching compiled kernels (fast_launch.py): keys that tell specializations apart, the
direct launch on the GPU, and the fallback to kernel[grid]."""
import pytest
import torch
from conftest import rel_err

import tritonmm
from tritonmm import fast_launch, plan, tuning
from tritonmm.tune import operands


def key(a, b, out, bias=None, precision="native", activation="none"):
    return plan.launch_key(a, b, out, bias, activation, precision)


def test_keys_tell_specializations_apart(device):
    a, b = operands(32, 48, 64, torch.float16, "NN", device)
    out = torch.empty(32, 48, dtype=torch.float16, device=device)
    base = key(a, b, out)
    assert key(a, b, out) == base
    big = torch.empty(33 * 64 + 8, dtype=torch.float16, device=device)
    shifted = big[1:1 + 32 * 64].view(32, 64)  # same shape and strides, a pointer off 16-byte alignment
    assert key(shifted, b, out) != base
    assert key(a.T.contiguous().T, b, out) != base  # strides
    assert key(a[:31], b, out[:31]) != base  # shape
    assert key(a, b, out, bias=torch.empty(48, dtype=torch.float16, device=device)) != base
    assert key(a, b, out, activation="relu") != base
    before = tuning.generation
    tuning.forget()
    assert tuning.generation != before and key(a, b, out) != base


class _Refusing:
    """A compiled kernel whose launcher rejects its arguments, as another Triton's might."""
    function = packed_metadata = None
    launch_metadata = staticmethod(lambda *args: None)

    @staticmethod
    def run(*args):
        raise TypeError("function takes exactly 31 arguments (25 given)")


class _Recording:
    """A compiled kernel that records what its launcher is handed."""
    function = packed_metadata = None
    launch_metadata = staticmethod(lambda *args: None)

    def __init__(self):
        self.calls = []

    def run(self, *args):
        self.calls.append(args)


def test_relaunch_passes_every_tensor_then_the_rest_in_order(monkeypatch):
    """A, B, C, bias and FP8 scales, then the arguments after the tensors; a kernel that makes
    descriptors on the device gets tritonmm's scratch allocator set before it launches."""
    from triton.runtime import _allocation
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    kernel = _Recording()
    kernel.metadata = type("Meta", (), {"global_scratch_size": 384})()
    compiled = fast_launch.Compiled(kernel, (4,), ("M", "N"))
    tensors = ("a", "b", "c", "bias", "scale_a", "scale_b")
    token = _allocation._allocator.set(_allocation.NullAllocator())
    try:
        assert compiled(tensors, 0)
        assert _allocation._allocator.get() is plan.device._allocate_scratch
    finally:
        _allocation._allocator.reset(token)
    args = kernel.calls[0][9:]  # after grid (3), stream, function, metadata, launch metadata, enter and exit hooks
    assert args == ("a", "b", "c", "bias", "scale_a", "scale_b", "M", "N")


def test_a_users_allocator_is_left_in_place():
    from triton.runtime import _allocation
    mine = lambda size, alignment, stream: None  # noqa: E731
    token = _allocation._allocator.set(mine)
    try:
        plan.device.use_scratch_allocator()
        assert _allocation._allocator.get() is mine
    finally:
        _allocation._allocator.reset(token)


def test_a_refused_direct_call_falls_back_for_good(monkeypatch):
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    compiled = fast_launch.Compiled(_Refusing(), (4,), (1, 2))
    assert compiled((None,), 0) is False
    assert not fast_launch.enabled()


@pytest.mark.gpu
@pytest.mark.parametrize("fast", [True, False], ids=["direct", "kernel[grid]"])
def test_gpu_repeated_products_relaunch(fast, path, monkeypatch):
    """The second call of a key launches the compiled kernel directly (no new plan); results are
    right for every call, on fresh inputs, and with the direct launch off, on both kernel paths
    (the TMA kernel makes its descriptors on the device from the new pointers)."""
    monkeypatch.setitem(fast_launch._state, "enabled", fast)
    plans = []
    real = plan.Product.__init__
    monkeypatch.setattr(plan.Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    shapes = [(100, 72, 56), (1, 4096, 64), (64, 1, 32)]  # sizes of 1 are specialized by Triton
    for dtype in (torch.bfloat16, torch.float32):
        for shape in shapes:
            for _ in range(3):
                a, b = operands(*shape, dtype, "NT", "cuda")
                out = torch.full(shape[:2], float("nan"), dtype=dtype, device="cuda")
                tritonmm.mm(a, b, out=out, input_precision="ieee" if dtype == torch.float32 else None)
                assert rel_err(out, a, b) < (1e-2 if dtype == torch.bfloat16 else 1e-5)
    assert fast_launch.enabled() == fast
    assert len(plans) == (2 if fast else 6) * len(shapes)


@pytest.mark.gpu
def test_gpu_relaunch_with_bias_activation_and_batches():
    x, w, bias = torch.randn(37, 48, device="cuda"), torch.randn(24, 48, device="cuda"), torch.randn(24, device="cuda")
    ref = torch.nn.functional.silu(torch.nn.functional.linear(x.double(), w.double(), bias.double()))
    for _ in range(3):
        y = tritonmm.linear(x, w, bias, "silu", input_precision="ieee")
        assert ((y.double() - ref).norm() / ref.norm()) < 1e-5
    for _ in range(3):
        a, b = torch.randn(5, 19, 23, device="cuda"), torch.randn(1, 23, 7, device="cuda")
        out = tritonmm.matmul(a, b, input_precision="ieee")
        assert torch.allclose(out, a @ b, atol=1e-4)
