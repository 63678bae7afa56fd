"""Per-device facts, and running launches on the operands' device.

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
    smem_bytes: int
    tma: bool  # Hopper's tensor memory accelerator (sm_90+)
    fp8: bool = False  # FP8 tensor cores (sm_89+)


def index(device: torch.device) -> int:
    """The CUDA device index a tensor's device names (a bare 'cuda' means the current one)."""
    return device.index if device.index is not None else torch.cuda.current_device()


@functools.lru_cache(maxsize=None)
def _facts(device_type: str, idx: int) -> DeviceFacts:
    if device_type == "cpu":  # the interpreter: H100-like limits, few "SMs" to keep it quick
        return DeviceFacts("cpu-interpreter", 4, 232448, True, True)
    import triton
    props = torch.cuda.get_device_properties(idx)
    smem = triton.runtime.driver.active.utils.get_device_properties(idx)["max_shared_mem"]
    return DeviceFacts(props.name, props.multi_processor_count, smem, props.major >= 9,
                       (props.major, props.minor) >= (8, 9))


def facts(device: torch.device) -> DeviceFacts:
    """Name, SM count, shared memory per block and TMA support of one device (cached per device)."""
    return _facts(device.type, 0 if device.type == "cpu" else index(device))


def on_device(device: torch.device):
    """A context that makes ``device`` current for a launch, or nothing when it already is
    (the common case costs one cheap query instead of two device switches)."""
    if device.type != "cuda" or device.index is None or device.index == torch.cuda.current_device():
        return contextlib.nullcontext()
    return torch.cuda.device(device.index)
