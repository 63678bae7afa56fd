"""Launches run on the operands' device, whatever device is current; device facts per device."""
import pytest
import torch
from conftest import every_product_on_the_tma_kernel, rel_err

import tritonmm
from tritonmm import config_space, device, planner
from tritonmm.tune import operands


def test_on_device_switches_only_when_needed(monkeypatch):
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    assert isinstance(device.on_device(torch.device("cuda", 0)), type(device.on_device(torch.device("cpu"))))
    guard = device.on_device(torch.device("cuda", 1))
    assert isinstance(guard, torch.cuda.device) and guard.idx == 1
    assert not isinstance(device.on_device(torch.device("cuda")), torch.cuda.device)  # bare "cuda" is current


def test_every_launch_runs_under_the_operands_device(monkeypatch):
    """planner.product enters the guard for the operands' device before it tunes or launches."""
    entered = []
    real = device.on_device
    monkeypatch.setattr(device, "on_device", lambda d: entered.append(d) or real(d))
    a, b = operands(20, 12, 16, torch.float32, "NN", "cuda" if torch.cuda.is_available() else "cpu")
    tritonmm.mm(a, b)
    assert entered and all(d == a.device for d in entered)


def test_facts_are_per_device():
    cpu = device.facts(torch.device("cpu"))
    assert cpu.name == "cpu-interpreter" and cpu.num_sms > 0


def test_memory_bandwidth_from_clock_and_bus():
    """device.hbm_bytes_per_s: two transfers a memory clock (kHz) over the bus (bits), as torch reports them for
    an H100 80GB HBM3 (3.35 TB/s); None where torch reports neither."""
    from types import SimpleNamespace
    h100 = SimpleNamespace(memory_clock_rate=2619000, memory_bus_width=5120)
    assert device.hbm_bytes_per_s(h100) == pytest.approx(3.352e12, rel=1e-3)
    assert device.hbm_bytes_per_s(SimpleNamespace()) is None


@pytest.mark.gpu
def test_gpu_facts_read_memory_bandwidth():
    bandwidth = device.facts(torch.device("cuda")).hbm_bytes_per_s
    assert bandwidth is None or 1e11 < bandwidth < 1e14


def _two_gpus():
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA GPUs")


@pytest.mark.gpu
@pytest.mark.multigpu
@pytest.mark.parametrize("tuned", [False, True], ids=["heuristic", "tuned"])
def test_multigpu_products_on_another_device(tuned, path, monkeypatch, tmp_path):
    """cuda:1, then cuda:0, then cuda:1 again in one process, with cuda:0 current throughout:
    every kernel path (the TF32 staging copy and the one-row kernel too) computes on the operands'
    device."""
    _two_gpus()
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1" if tuned else "0")
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    torch.cuda.set_device(0)
    for dev in ("cuda:1", "cuda:0", "cuda:1"):
        for dtype, prec in ((torch.bfloat16, None), (torch.float32, "tf32"), (torch.float32, "ieee")):
            a, b = operands(256, 192, 320, dtype, "NT", dev)
            out = tritonmm.mm(a, b, input_precision=prec)
            assert out.device == torch.device(dev)
            assert rel_err(out, a, b) < (1e-2 if dtype == torch.bfloat16 else 2e-3), (dev, dtype, prec)
            # (3, 40) rows, and one row of a decode step: the one-row kernel (kernels/gemv.py)
            for rows in ((3, 40), (1,)):
                x, w, bias = (torch.randn(*s, device=dev) for s in ((*rows, 64), (2048, 64), (2048,)))
                y = tritonmm.linear(x, w, bias, "gelu", input_precision="ieee")
                ref = torch.nn.functional.gelu(torch.nn.functional.linear(x.double(), w.double(), bias.double()))
                assert ((y.double() - ref).norm() / ref.norm()) < 1e-5, rows
        assert torch.cuda.current_device() == 0
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


@pytest.mark.gpu
@pytest.mark.multigpu
def test_multigpu_staged_and_split_products_on_another_device(monkeypatch, tmp_path):
    """Staging copies (rows not 16-byte aligned; the copy kernel has a relaunch cache of its own) and the TMA
    kernel's split-K workspace are made and run on the operands' device, cuda:0 current; each staged product
    is called twice, the second call a relaunch."""
    _two_gpus()
    every_product_on_the_tma_kernel(monkeypatch, "cuda:1")
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    torch.cuda.set_device(0)
    split = config_space.make_config(64, 64, 64, 3, 4, SPLIT_K=3)
    for dev in ("cuda:1", "cuda:0", "cuda:1"):
        a, b = operands(131, 97, 517, torch.bfloat16, "NN", dev)  # rows of 517 and 97 elements: both staged
        for _ in range(2):
            out = tritonmm.mm(a, b)
            assert out.device == torch.device(dev) and rel_err(out, a, b) < 1e-2, dev
        a, b = operands(192, 160, 1024, torch.bfloat16, "NT", dev)
        out = planner.product(a, b, precision="native", config=split)
        assert out.device == torch.device(dev) and rel_err(out, a, b) < 1e-2, dev
        assert torch.cuda.current_device() == 0
    torch.cuda.synchronize(0)
    torch.cuda.synchronize(1)


@pytest.mark.gpu
@pytest.mark.multigpu
def test_multigpu_stream_and_autograd_on_another_device():
    """The launch uses the current stream of the operands' device; autograd's products too."""
    _two_gpus()
    torch.cuda.set_device(0)
    stream = torch.cuda.Stream(device=1)
    a, b = operands(128, 96, 64, torch.float32, "NN", "cuda:1")
    with torch.cuda.stream(stream):
        out = tritonmm.mm(a, b, input_precision="ieee")
    stream.synchronize()
    assert rel_err(out, a, b) < 1e-5
    a.requires_grad_()
    tritonmm.matmul(a, b, input_precision="ieee").sum().backward()
    assert torch.allclose(a.grad, torch.ones(128, 96, device="cuda:1") @ b.T, atol=1e-4)
    assert torch.cuda.current_device() == 0


@pytest.mark.gpu
@pytest.mark.multigpu
def test_multigpu_cuda_reference_on_another_device():
    _two_gpus()
    import cuda_reference
    torch.cuda.set_device(0)
    a, b = operands(130, 70, 90, torch.float32, "NN", "cuda:1")
    for kernel in ("naive", "tiled", "double_buffer"):
        out = cuda_reference.matmul(a, b, kernel)
        assert out.device == torch.device("cuda:1") and rel_err(out, a, b) < 1e-5, kernel
    assert torch.cuda.current_device() == 0
