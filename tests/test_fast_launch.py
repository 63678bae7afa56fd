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


def test_tma_relaunch_passes_every_tensor_after_the_descriptors(monkeypatch):
    """The descriptors of A, B and C are re-pointed; bias and FP8 scales follow them in order."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    x = torch.randn(32, 32)
    kernel = _Recording()
    compiled = fast_launch.Compiled(kernel, (4,), ("M", "N"), descriptors=[TensorDescriptor.from_tensor(x, [16, 16])] * 3)
    tensors = (torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 32), "bias", "scale_a", "scale_b")
    assert compiled(tensors, 0)
    args = kernel.calls[0][9:]  # after grid (3), stream, function, metadata, launch metadata, enter and exit hooks
    assert [d.base for d in args[:3]] == list(tensors[:3])
    assert args[3:] == ("bias", "scale_a", "scale_b", "M", "N")


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
    (a TMA relaunch re-points the first launch's descriptors at the new tensors)."""
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


def test_cached_descriptors_keep_no_tensor_alive():
    """A TMA entry keeps its descriptors' shapes, strides and blocks, not the first call's tensors."""
    import weakref

    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.randn(32, 32)
    compiled = fast_launch.Compiled(_Refusing(), (1,), (), descriptors=[TensorDescriptor.from_tensor(x, [16, 16])])
    alive = weakref.ref(x)
    del x
    assert alive() is None and all(d.base is None for d in compiled.descriptors)
