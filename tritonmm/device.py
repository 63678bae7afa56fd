"""Per-device facts read from the GPU, and running launches on the operands' device.

The planner's rules are written in these facts (SMs, shared memory, L2, capability), never in one
GPU's literals, so they carry to other GPUs; thresholds.py keys its table by ``arch``.

Triton launches on the *current* CUDA device and its current stream, not on the device the
tensors live on: with tensors on cuda:1 while cuda:0 is current, a launch reads cuda:1
addresses from a cuda:0 context (an illegal memory access that poisons the process's CUDA
context). ``on_device`` makes the operands' device current for the launch and restores the
caller's afterwards; the stream is then that device's current stream, as torch's own ops use.
"""
import contextlib
import functools
from typing import NamedTuple

import torch


class DeviceFacts(NamedTuple):
    name: str
    num_sms: int
    smem_bytes: int  # shared memory one block may use
    tma: bool  # Hopper's tensor memory accelerator (sm_90+)
    fp8: bool = False  # FP8 tensor cores (sm_89+)
    l2_bytes: int = 50 * 2 ** 20
    capability: tuple = (9, 0)
    hbm_bytes_per_s: float | None = None  # memory clock x bus width x 2 (DDR); None where not known
    smem_per_sm: int = 233472  # shared memory of one SM, which its resident blocks share (Hopper's 228 KiB)

    @property
    def arch(self) -> str:
        """The row of thresholds.TABLE this device reads: 'sm90' for Hopper and newer, else 'default'."""
        return "sm90" if self.capability >= (9, 0) else "default"


def index(device: torch.device) -> int:
    """The CUDA device index a tensor's device names (a bare 'cuda' means the current one)."""
    return device.index if device.index is not None else torch.cuda.current_device()


# The CPU interpreter stands in for a Hopper with few "SMs", so that tests are quick and reach every path.
INTERPRETER = DeviceFacts("cpu-interpreter", 4, 232448, True, True, 50 * 2 ** 20, (9, 0))


@functools.lru_cache(maxsize=None)
def _facts(device_type: str, idx: int) -> DeviceFacts:
    if device_type == "cpu":
        return INTERPRETER
    import triton
    props = torch.cuda.get_device_properties(idx)
    smem = triton.runtime.driver.active.utils.get_device_properties(idx)["max_shared_mem"]
    capability = (props.major, props.minor)
    return DeviceFacts(props.name, props.multi_processor_count, smem, capability >= (9, 0), capability >= (8, 9),
                       int(getattr(props, "L2_cache_size", 0)) or DeviceFacts._field_defaults["l2_bytes"], capability,
                       hbm_bytes_per_s(props), int(getattr(props, "shared_memory_per_multiprocessor", 0)) or smem)


def hbm_bytes_per_s(props):
    """The device memory's bandwidth from its clock (kHz) and bus width (bits), two transfers a clock; None where
    torch does not report them."""
    clock_khz, bus_bits = getattr(props, "memory_clock_rate", 0), getattr(props, "memory_bus_width", 0)
    return 2 * clock_khz * 1e3 * bus_bits / 8 if clock_khz and bus_bits else None


def facts(device: torch.device) -> DeviceFacts:
    """Name, SM count, shared memory per block, TMA and FP8 support, L2 size, capability, memory bandwidth and
    shared memory per SM of one device (cached per device)."""
    return _facts(device.type, 0 if device.type == "cpu" else index(device))


def on_device(device: torch.device):
    """A context that makes ``device`` current for a launch, or nothing when it already is
    (the common case costs one cheap query instead of two device switches)."""
    if device.type != "cuda" or device.index is None or device.index == torch.cuda.current_device():
        return contextlib.nullcontext()
    return torch.cuda.device(device.index)
