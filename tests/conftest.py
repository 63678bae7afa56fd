"""Test setup: without a GPU, Triton's interpreter runs the kernels on the CPU.

TRITON_INTERPRET must be set before triton is first imported, so it is set here, at
collection time. Tuning results go to a temporary cache, never the user's.
"""
import os
import shutil
import tempfile

import torch

HAS_GPU = torch.cuda.is_available()
if not HAS_GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")
os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp(prefix="tritonmm-test-cache-")
# Heuristic configs unless a test turns tuning on: every config of the spaces is checked on
# its own (test_gpu_every_config_of_the_space_is_correct), and tuning dozens of shape
# buckets would only repeat that slowly.
os.environ.setdefault("TRITONMM_AUTOTUNE", "0")

import pytest  # noqa: E402

DEVICE = "cuda" if HAS_GPU else "cpu"


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords and not HAS_GPU:
            item.add_marker(skip_gpu)


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(os.environ["TRITONMM_CACHE_DIR"], ignore_errors=True)


@pytest.fixture
def device():
    return DEVICE


@pytest.fixture(params=["tma", "pointer"])
def path(request, monkeypatch):
    """Runs a test on one kernel path. The TMA path serves only large products by default
    (plan.TMA_MIN_MACS), so small test shapes reach it by lowering that bar; the fixture's
    value is the path 16-byte aligned operands then take (the TMA path needs Hopper)."""
    import importlib
    module = importlib.import_module("tritonmm.plan")
    monkeypatch.setattr(module, "TMA_MIN_MACS", 0 if request.param == "tma" else float("inf"))
    if request.param == "tma":  # and no product counts as too few tiles or rows for it, nor too small to split (tf32x3)
        monkeypatch.setattr(module, "FEW_TILES_PER_SM", 0)
        monkeypatch.setattr(module, "TMA_MIN_ROWS", 0)
        monkeypatch.setattr(module, "TF32X3_SPLIT_MIN_MACS_PER_BYTE", 0)
    else:  # nor worth staging for it, and the pointer kernel reads the caller's operands
        monkeypatch.setattr(module, "STAGE_MIN_MACS_PER_BYTE", float("inf"))
        monkeypatch.setattr(module, "POINTER_STAGE_MAX_LOAD_BYTES", 0)
    tma_capable = importlib.import_module("tritonmm.device").facts(torch.device(DEVICE)).tma
    return "tma" if request.param == "tma" and tma_capable else "pointer"


def every_product_on_tma(monkeypatch) -> None:
    """Lowers every size bar of the TMA path: products of any size take it, staging what TMA
    cannot read and splitting tf32x3's operands (where the device has TMA: plan.tma_path)."""
    import importlib
    module = importlib.import_module("tritonmm.plan")
    for name in ("TMA_MIN_MACS", "TMA_MIN_ROWS", "FEW_TILES_PER_SM", "STAGE_MIN_MACS_PER_BYTE",
                 "STAGE_MIN_MACS_PER_BYTE_WIDE_READS", "STAGE_EAGER_MIN_MACS",
                 "TF32X3_SPLIT_MIN_MACS_PER_BYTE"):
        monkeypatch.setattr(module, name, 0)


def every_product_on_the_tma_kernel(monkeypatch, device: str, stand_in_sms: int = 132) -> None:
    """every_product_on_tma where the kernel can run: on a GPU with TMA (others skip the test), or in the
    CPU interpreter, which runs tensor descriptors, as a stand-in Hopper of ``stand_in_sms`` SMs."""
    import importlib
    devices = importlib.import_module("tritonmm.device")
    if device == "cpu":
        stand_in = devices.DeviceFacts("NVIDIA H100 80GB HBM3", stand_in_sms, 232448, True, True)
        monkeypatch.setattr(importlib.import_module("tritonmm.plan").device, "facts", lambda d: stand_in)
    elif not devices.facts(torch.device(device)).tma:
        pytest.skip("the TMA kernel needs Hopper")
    every_product_on_tma(monkeypatch)


def every_product_staged_for_pointer(monkeypatch) -> None:
    """Every product on the pointer kernel, eager or captured, and its 16-bit operands copied K-major with K
    padded where it would read one narrower than 16 bytes at a time (plan.POINTER_STAGE_MAX_LOAD_BYTES), the
    copies paying at any size (POINTER_STAGE_MIN_MACS_PER_BYTE)."""
    import importlib
    module = importlib.import_module("tritonmm.plan")
    monkeypatch.setattr(module, "TMA_MIN_MACS", float("inf"))
    monkeypatch.setattr(module, "STAGE_MIN_MACS_PER_BYTE", float("inf"))
    monkeypatch.setattr(module, "STAGE_EAGER_MIN_MACS", 0)
    monkeypatch.setattr(module, "POINTER_STAGE_MAX_LOAD_BYTES", 8)
    monkeypatch.setattr(module, "POINTER_STAGE_MIN_MACS_PER_BYTE", 0)


def rel_err(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> float:
    """Relative Frobenius error of out against a float64 product; NaN anywhere fails."""
    ref = a.double() @ b.double()
    if torch.isnan(out).any():
        return float("inf")
    return ((out.double() - ref).norm() / ref.norm().clamp_min(1e-300)).item()
