"""Every bad input to tritonmm's ops is a TypeError or ValueError that names the argument."""
import operator
import subprocess
import sys
import types

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from conftest import HAS_GPU

import tritonmm
from tritonmm import validation


def ok(device, *shape, dtype=torch.float32):
    return torch.randn(*shape, device=device).to(dtype)


def raises_naming(exc, words, call):
    """call() raises exc, and its message contains every one of words."""
    with pytest.raises(exc) as info:
        call()
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("make, exc, words", [
    (lambda d: ([[1.0]], ok(d, 1, 1)), TypeError, ["a must be a torch.Tensor", "list"]),
    (lambda d: (ok(d, 2, 2), 3.0), TypeError, ["b must be a torch.Tensor"]),
    (lambda d: (ok(d, 2, 3, 4), ok(d, 4, 2)), ValueError, ["a must be a 2-D", "tritonmm.matmul"]),
    (lambda d: (ok(d, 2, 3), ok(d, 3)), ValueError, ["b must be a 2-D"]),
    (lambda d: (ok(d, 2, 3), ok(d, 4, 2)), ValueError, ["inner dimensions", "(2, 3)", "(4, 2)"]),
    (lambda d: (ok(d, 2, 3), ok(d, 3, 2, dtype=torch.float16)), TypeError, ["float32", "float16", "same dtype"]),
    (lambda d: (ok(d, 2, 3, dtype=torch.float64), ok(d, 3, 2, dtype=torch.float64)), TypeError,
     ["float64", "torch.float16, torch.bfloat16 or torch.float32"]),
    (lambda d: (torch.ones(2, 3, dtype=torch.int32, device=d), torch.ones(3, 2, dtype=torch.int32, device=d)),
     TypeError, ["int32", "supports"]),
])
def test_bad_mm_operands(make, exc, words, device):
    a, b = make(device)
    raises_naming(exc, words, lambda: tritonmm.mm(a, b))


@pytest.mark.parametrize("make, exc, words", [
    (lambda d: (ok(d, 2, 3), 3.0), TypeError, ["b must be a torch.Tensor"]),
    (lambda d: (torch.tensor(2.0, device=d), ok(d, 3)), ValueError, ["a must have at least 1 dimensions", "0-D"]),
    (lambda d: (ok(d, 5, 2, 3), ok(d, 4, 2)), ValueError, ["inner dimensions", "second-to-last"]),
    (lambda d: (ok(d, 3), ok(d, 4)), ValueError, ["inner dimensions", "only"]),
    (lambda d: (ok(d, 2, 4, 3), ok(d, 5, 3, 2)), ValueError, ["batch dimensions (2,)", "(5,)", "broadcast"]),
    (lambda d: (ok(d, 2, 2, 3), ok(d, 3, 2, dtype=torch.float16)), TypeError, ["same dtype"]),
])
def test_bad_matmul_operands(make, exc, words, device):
    a, b = make(device)
    raises_naming(exc, words, lambda: tritonmm.matmul(a, b))


@pytest.mark.parametrize("make, exc, words", [
    (lambda d: (ok(d, 4, 6), ok(d, 5, 7), None, None), ValueError, ["6 features", "(5, 7)"]),
    (lambda d: (ok(d, 4, 6), ok(d, 5, 6, 1), None, None), ValueError, ["weight must be a 2-D"]),
    (lambda d: (ok(d, 4, 6), ok(d, 5, 6), ok(d, 4), None), ValueError, ["bias has 4 elements", "(5,)"]),
    (lambda d: (ok(d, 4, 6), ok(d, 5, 6), ok(d, 1, 5), None), ValueError, ["bias must have 1 dimensions"]),
    (lambda d: (ok(d, 4, 6), ok(d, 5, 6), ok(d, 5, dtype=torch.float16), None), TypeError, ["bias is torch.float16"]),
    (lambda d: (ok(d, 4, 6), ok(d, 5, 6), None, "tanh"), ValueError, ["activation must be None or one of", "'tanh'"]),
])
def test_bad_linear_args(make, exc, words, device):
    x, w, bias, act = make(device)
    raises_naming(exc, words, lambda: tritonmm.linear(x, w, bias, act))


def test_out_with_a_gradient_is_refused(device):
    a = ok(device, 4, 6).requires_grad_()
    with pytest.raises(ValueError, match="out= does not record a gradient"):
        tritonmm.mm(a, ok(device, 6, 5), out=torch.empty(4, 5, device=device))


def test_out_that_requires_a_gradient_is_refused_as_torch_refuses_it(device):
    """torch.mm refuses an out that requires a gradient while autograd records: so does tritonmm, also after the
    same product ran into an out of the same layout (the launch cache's key holds no gradient flag), and under
    no_grad it runs."""
    a, b = ok(device, 4, 6), ok(device, 6, 5)
    for op in (tritonmm.mm, tritonmm.matmul):
        op(a, b, out=torch.empty(4, 5, device=device))
        out = torch.full((4, 5), float("nan"), device=device).requires_grad_()
        with pytest.raises(ValueError, match="out= does not record a gradient"):
            op(a, b, out=out)
        with torch.no_grad():
            assert op(a, b, out=out) is out and torch.allclose(out, a @ b, atol=1e-2, rtol=1e-2)


def test_a_written_out_tells_autograd_as_torch_does(device):
    """out= bumps out's version, as torch's out= kernels do: a backward that saved out then refuses to run on the new
    values instead of computing a wrong gradient. mm and matmul, 2-D and batched, first calls and repeats."""
    w = ok(device, 3, 4, 5).requires_grad_()
    for op, a, b in ((tritonmm.mm, ok(device, 4, 6), ok(device, 6, 5)), (tritonmm.matmul, ok(device, 4, 6),
                                                                          ok(device, 6, 5)),
                     (tritonmm.matmul, ok(device, 3, 4, 6), ok(device, 6, 5))):
        for _ in range(2):
            out = torch.full((*a.shape[:-1], 5), float("nan"), device=device)
            loss = (w * out).sum()  # autograd saves out for w's gradient
            version = out._version
            assert op(a, b, out=out) is out and out._version > version
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                loss.backward()


@pytest.mark.parametrize("make_out, exc, words", [
    (lambda a, d: "x", TypeError, ["out must be a torch.Tensor"]),
    (lambda a, d: torch.empty(3, 3, device=d), ValueError, ["out has shape (3, 3)", "(4, 5)"]),
    (lambda a, d: torch.empty(4, 5, device=d, dtype=torch.float16), TypeError, ["out has dtype", "float32"]),
    (lambda a, d: a[:, :5], ValueError, ["overlaps input a"]),
    (lambda a, d: torch.empty(1, 5, device=d).expand(4, 5), ValueError, ["zero stride"]),
])
def test_bad_out(make_out, exc, words, device):
    a = ok(device, 4, 6)
    b = ok(device, 6, 5)
    raises_naming(exc, words, lambda: tritonmm.matmul(a, b, out=make_out(a, device)))


@pytest.mark.parametrize("config, exc, words", [
    ("big", TypeError, ["config must be a dict or a triton.Config"]),
    (dict(BLOCK_M=64, BLOCK_N=64), ValueError, ["missing", "BLOCK_K"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, BLOCK_Q=2), ValueError, ["unknown keys", "BLOCK_Q"]),
    (dict(BLOCK_M=48, BLOCK_N=64, BLOCK_K=32), ValueError, ["BLOCK_M", "power of two"]),
    (dict(BLOCK_M=32, BLOCK_N=8, BLOCK_K=32), ValueError, ["at least 16", "BLOCK_M of 1, 2, 4 or 8"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=8), ValueError, ["BLOCK_K", "at least 16"]),
    (dict(BLOCK_M=1, BLOCK_N=6, BLOCK_K=32), ValueError, ["BLOCK_N", "power of two"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=32, SPLIT_K=2), ValueError, ["BLOCK_M=1", "SPLIT_K"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=32, TAIL=1), ValueError, ["BLOCK_M=1", "TAIL"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=0), ValueError, ["num_warps", "positive"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, TAIL=2), ValueError, ["TAIL", "must be 1", "or 0"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, TAIL=True), ValueError, ["TAIL", "must be 1", "or 0"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, PER_SM=0), ValueError, ["PER_SM", "positive"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, PER_SM=5), ValueError, ["PER_SM", "at most 4"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=32, PER_SM=2), ValueError, ["BLOCK_M=1", "PER_SM"]),
])
def test_bad_config(config, exc, words, device):
    raises_naming(exc, words, lambda: tritonmm.matmul(ok(device, 4, 6), ok(device, 6, 5), config=config))


def test_bad_precision(device):
    with pytest.raises(ValueError, match="input_precision must be None, 'ieee', 'tf32' or 'tf32x3'"):
        tritonmm.matmul(ok(device, 4, 6), ok(device, 6, 5), input_precision="fp8")


def test_bad_autotune_env(device, monkeypatch):
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "yes")
    from tritonmm import tuning
    tuning.forget()
    with pytest.raises(ValueError, match="TRITONMM_AUTOTUNE must be 0 or 1"):
        tritonmm.matmul(ok(device, 4, 6), ok(device, 6, 5))


@pytest.mark.gpu
def test_mixed_devices():
    with pytest.raises(ValueError, match="a is on cuda:0 but b is on cpu"):
        tritonmm.matmul(ok("cuda", 4, 6), ok("cpu", 6, 5))
    with pytest.raises(ValueError, match="out is on cpu"):
        tritonmm.matmul(ok("cuda", 4, 6), ok("cuda", 6, 5), out=torch.empty(4, 5))


def test_cpu_tensors_without_interpreter_name_the_fix():
    """A CPU tensor outside interpreter mode says that TRITON_INTERPRET=1 runs it on the CPU."""
    code = ("import torch, tritonmm\n"
            "try:\n    tritonmm.matmul(torch.randn(2, 3), torch.randn(3, 2))\n"
            "except ValueError as e:\n    print('ValueError:', e)\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert "ValueError: a is on the CPU" in out.stdout and "TRITON_INTERPRET=1" in out.stdout, out.stderr


@pytest.mark.skipif(HAS_GPU, reason="only the CPU machine has no GPU to point to")
def test_interpreter_accepts_cpu_tensors():
    assert tritonmm.matmul(torch.ones(2, 3), torch.ones(3, 2)).sum().item() == 12.0


# Triton 3.6's interpreter calls int() on shape-(1,) NumPy arrays, which NumPy >= 2.4 refuses:
# validation wraps its _patch_lang_tensor so that tl.tensor.__index__ squeezes the array first.

@pytest.mark.parametrize("version, needed", [
    ("3.6.0", True), ("3.6.1+git4f2c1a9", True), ("3.6.0rc1", True), (" 3.5.1", True), ("2.3.1", True),
    ("3.7.0", False), ("3.8.0", False), ("3.9.0+gitabc1234", False), ("3.10.0", False), ("4.0", False),
    ("", False), ("main", False), ("3", False), (None, False),
])
def test_index_shim_version_gate(version, needed):
    assert validation._needs_index_shim(version) is needed


class _Scope:
    """What the interpreter's _LangPatchScope does: records each attribute it sets, and puts the
    earlier values back, last first, when the kernel has run."""
    MISSING = object()

    def __init__(self):
        self.changes = []

    def set_attr(self, obj, name, value):
        self.changes.append((obj, name, vars(obj).get(name, self.MISSING)))
        setattr(obj, name, value)

    def restore(self):
        while self.changes:
            obj, name, value = self.changes.pop()
            if value is self.MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, value)


def _patch_lang_tensor_of_triton_3_6(tensor, scope):
    """triton/runtime/interpreter.py of Triton 3.6.0, the attributes it sets on tl.tensor (two of them)."""
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))
    scope.set_attr(tensor, "__bool__", lambda self: bool(self.handle.data) if self.handle.data.size == 1 else True)


def _scalar(data):
    return types.SimpleNamespace(handle=types.SimpleNamespace(data=data))


def test_index_shim_squeezes_shape_1_arrays_and_is_undone_with_the_interpreters_patch():
    interpreter = types.SimpleNamespace(_patch_lang_tensor=_patch_lang_tensor_of_triton_3_6)
    assert validation._wrap_patch_lang_tensor(interpreter)
    wrapped = interpreter._patch_lang_tensor
    assert wrapped is not _patch_lang_tensor_of_triton_3_6
    assert validation._wrap_patch_lang_tensor(interpreter) and interpreter._patch_lang_tensor is wrapped  # idempotent

    class Tensor:
        pass

    scope = _Scope()
    interpreter._patch_lang_tensor(Tensor, scope)
    for data in (np.array([7], dtype=np.int32), np.array(7, dtype=np.int64), np.array([[7]], dtype=np.int32)):
        t = Tensor()
        t.handle = _scalar(data).handle
        assert operator.index(t) == 7 and list(range(t)) == list(range(7))
    assert vars(Tensor)["__index__"] is validation._squeezed_index
    assert vars(Tensor)["__bool__"].__qualname__.startswith("_patch_lang_tensor_of_triton_3_6")  # left as set
    t = Tensor()
    t.handle = _scalar(np.array([0], dtype=np.int32)).handle
    assert not bool(t)
    scope.restore()
    assert "__index__" not in vars(Tensor) and "__bool__" not in vars(Tensor)


def test_index_shim_does_nothing_where_the_interpreter_differs():
    assert not validation._wrap_patch_lang_tensor(types.SimpleNamespace())  # no _patch_lang_tensor
    assert not validation._wrap_patch_lang_tensor(types.SimpleNamespace(_patch_lang_tensor=3))

    def sets_nothing(tensor, scope):
        pass

    interpreter = types.SimpleNamespace(_patch_lang_tensor=sets_nothing)
    assert validation._wrap_patch_lang_tensor(interpreter)

    class Tensor:
        pass

    interpreter._patch_lang_tensor(Tensor, _Scope())
    assert "__index__" not in vars(Tensor)  # the interpreter set no __index__: neither does the shim

    def no_scope(tensor):  # an interpreter whose patch takes no undo scope: set directly
        tensor.__index__ = lambda self: int(self.handle.data)

    interpreter = types.SimpleNamespace(_patch_lang_tensor=no_scope)
    assert validation._wrap_patch_lang_tensor(interpreter)
    interpreter._patch_lang_tensor(Tensor)
    assert vars(Tensor)["__index__"] is validation._squeezed_index


def test_index_shim_is_in_place_exactly_where_it_is_needed():
    import triton.runtime.interpreter as interpreter
    wrapped = getattr(interpreter._patch_lang_tensor, "_tritonmm_squeezed_index", False)
    assert wrapped == (validation.interpreting() and validation._needs_index_shim(triton.__version__))


@triton.jit
def _count_kernel(out_ptr, n):
    total = 0
    for _ in range(n):  # interpreted, range() takes n.__index__(): int() of n's shape-(1,) array
        total += 1
    tl.store(out_ptr + tl.program_id(0), total)


def test_a_kernel_loops_over_a_runtime_int(device):
    """Fails on Triton 3.6's interpreter with NumPy >= 2.4 without the shim ("only 0-dimensional
    arrays can be converted to Python scalars")."""
    out = torch.zeros(2, dtype=torch.int32, device=device)
    _count_kernel[(2,)](out, 5)
    assert out.tolist() == [5, 5]


def test_overlaps_compares_byte_ranges():
    """kernels.overlaps, which both argument checks ask: adjacent rows of one buffer do not overlap, shared rows do,
    and an empty tensor touches nothing; interleaved columns share a byte range, so they count as overlapping."""
    from tritonmm.kernels import overlaps
    buf = torch.randn(6, 8)
    assert not overlaps(buf[:2], buf[2:]) and overlaps(buf[:3], buf[2:]) and overlaps(buf[2:], buf[:3])
    assert not overlaps(buf[:0], buf) and not overlaps(buf, buf[3:3])
    assert overlaps(buf[:, 0::2], buf[:, 1::2]) and not overlaps(buf, torch.randn(6, 8))
