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
# Override's Python kernels, whatever build of native.cpp is on disk: tests count the products that reach the planner
# (a call native.cpp repeats does not); tests/test_native.py turns it on.
os.environ["TRITONMM_NATIVE"] = "0"

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
    (thresholds: tma_min_macs), so small test shapes reach it by lowering that bar; the fixture's
    value is the path 16-byte aligned operands then take (the TMA path needs Hopper)."""
    import importlib
    thresholds = importlib.import_module("tritonmm.thresholds")
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 0 if request.param == "tma" else float("inf"))
    if request.param == "tma":  # and no product counts as too few tiles or rows for it, nor too small to split (tf32x3)
        monkeypatch.setitem(thresholds.OVERRIDES, "few_tiles_per_sm", 0)
        monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_rows", 0)
        monkeypatch.setitem(thresholds.OVERRIDES, "tf32x3_split_min_macs_per_byte", 0)
        monkeypatch.setitem(thresholds.OVERRIDES, "ieee_tma", True)  # IEEE float32 too (ieee-pointer)
    else:  # nor worth staging for it, nor few rows in graphs, and the pointer kernel reads the caller's operands
        monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)
        monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
        monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 0)
    tma_capable = importlib.import_module("tritonmm.device").facts(torch.device(DEVICE)).tma
    return "tma" if request.param == "tma" and tma_capable else "pointer"


def every_product_on_tma(monkeypatch) -> None:
    """Lowers every size bar of the TMA path: products of any size take it, staging what TMA
    cannot read and splitting tf32x3's operands, IEEE float32 too (where the device has TMA: rules.tma_path;
    thresholds' ieee_tma)."""
    import importlib
    thresholds = importlib.import_module("tritonmm.thresholds")
    for name in ("tma_min_macs", "tma_min_rows", "few_tiles_per_sm", "stage_min_macs_per_byte",
                 "stage_min_macs_per_byte_wide_reads", "stage_eager_min_macs", "stage_eager_native_min_macs",
                 "tf32x3_split_min_macs_per_byte"):
        monkeypatch.setitem(thresholds.OVERRIDES, name, 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_tma", True)  # IEEE float32 too (ieee-pointer)


def every_product_on_the_tma_kernel(monkeypatch, device: str, stand_in_sms: int = 132) -> None:
    """every_product_on_tma where the kernel can run: on a GPU with TMA (others skip the test), or in the
    CPU interpreter, which runs tensor descriptors, as a stand-in Hopper of ``stand_in_sms`` SMs."""
    import importlib
    devices = importlib.import_module("tritonmm.device")
    if device == "cpu":
        stand_in = devices.DeviceFacts("NVIDIA H100 80GB HBM3", stand_in_sms, 232448, True, True)
        monkeypatch.setattr(devices, "facts", lambda d: stand_in)
    elif not devices.facts(torch.device(device)).tma:
        pytest.skip("the TMA kernel needs Hopper")
    every_product_on_tma(monkeypatch)


def every_product_staged_for_pointer(monkeypatch) -> None:
    """Every product on the pointer kernel, eager or captured, and its 16-bit operands copied K-major with K
    padded where it would read one narrower than 16 bytes at a time (thresholds: pointer_stage_max_load_bytes),
    the copies paying at any size (pointer_stage_min_macs_per_byte)."""
    import importlib
    thresholds = importlib.import_module("tritonmm.thresholds")
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_eager_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_eager_native_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 8)
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_min_macs_per_byte", 0)


def rel_err(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> float:
    """bench.common.rel_err of out against the float64 product a @ b: the relative Frobenius error, inf where
    out holds a NaN or an inf anywhere."""
    from bench.common import rel_err as relative_error  # here, not at the top: TRITON_INTERPRET is set first
    return relative_error(out, a.double() @ b.double())
