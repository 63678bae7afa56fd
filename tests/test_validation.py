"""Every bad input to tritonmm's ops is a TypeError or ValueError that names the argument."""
import subprocess
import sys

import pytest
import torch
from conftest import HAS_GPU

import tritonmm


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
    (dict(BLOCK_M=8, BLOCK_N=64, BLOCK_K=32), ValueError, ["at least 16", "BLOCK_M=1"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=8), ValueError, ["BLOCK_K", "at least 16"]),
    (dict(BLOCK_M=1, BLOCK_N=6, BLOCK_K=32), ValueError, ["BLOCK_N", "power of two"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=32, SPLIT_K=2), ValueError, ["BLOCK_M=1", "SPLIT_K"]),
    (dict(BLOCK_M=1, BLOCK_N=8, BLOCK_K=32, TAIL=1), ValueError, ["BLOCK_M=1", "TAIL"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=0), ValueError, ["num_warps", "positive"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, TAIL=2), ValueError, ["TAIL", "must be 1", "or 0"]),
    (dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, TAIL=True), ValueError, ["TAIL", "must be 1", "or 0"]),
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
