"""Route unchanged models to tritonmm: aten's mm, addmm and bmm on CUDA tensors, as FlagGems'
use_gems() does, through torch.library.

    with tritonmm.use_tritonmm():       # or tritonmm.enable() ... tritonmm.disable()
        loss = model(x).sum()           # forward and backward products run on tritonmm
        loss.backward()

The kernels are registered for the CUDA dispatch key, below autograd: aten's own derivative
formulas still run, and the products they call in the backward pass come here too.
``aten::linear`` reaches these through its decomposition (a 2-D or contiguous 3-D input with
a bias becomes addmm, whose bias add is fused into tritonmm's epilogue; others mm or bmm).
Anything tritonmm does not take (other dtypes, addmm with beta or alpha other than 1, mixed
devices) goes to the kernel aten had before, fetched from the dispatcher when enabling.
"""
import contextlib
import inspect
import warnings

import torch

from . import plan, validation

_SUPPORTED = validation.SUPPORTED_DTYPES
_state = {"lib": None, "original": {}}


def _get_kernel(name: str):
    """The CUDA kernel aten has for an operator now (torch.library.get_kernel, torch >= 2.10;
    the dispatcher call behind it otherwise)."""
    getter = getattr(torch.library, "get_kernel", None)
    if getter is not None:
        return getter(name, "CUDA")
    return torch._C._dispatch_get_computed_kernel_for_dispatch_key(name, torch._C.DispatchKey.CUDA)


def shapes_ok(a, b, dims: int) -> bool:
    """The shapes aten's mm (dims 2) or bmm (dims 3) accepts. Anything else goes to aten, which
    raises its own error: the kernels below this layer assume checked arguments."""
    return a.dim() == b.dim() == dims and a.shape[-1] == b.shape[-2] and a.shape[:-2] == b.shape[:-2]


def _takes(a, b, *others, dims: int) -> bool:
    """Whether tritonmm computes this product: a supported dtype, all on one CUDA device, shapes_ok."""
    return (a.dtype in _SUPPORTED and a.device.type == "cuda"
            and all(t.dtype == a.dtype and t.device == a.device for t in (b, *others)) and shapes_ok(a, b, dims))


def _mm(keyset, a, b):
    if _takes(a, b, dims=2):
        return plan.product(a, b, precision=plan.resolve_precision(a.dtype, None))
    return _state["original"]["aten::mm"].call_boxed(keyset, a, b)


def _bmm(keyset, a, b):
    if _takes(a, b, dims=3):
        return plan.product(a, b, precision=plan.resolve_precision(a.dtype, None))
    return _state["original"]["aten::bmm"].call_boxed(keyset, a, b)


def _addmm(keyset, bias, a, b, *, beta=1, alpha=1):
    if beta == 1 and alpha == 1 and _takes(a, b, bias, dims=2):
        try:
            bias.expand(a.shape[0], b.shape[1])
        except RuntimeError:
            pass  # aten raises its own error for a bias that does not broadcast
        else:
            return plan.product(a, b, bias=bias, precision=plan.resolve_precision(a.dtype, None))
    return _state["original"]["aten::addmm"].call_boxed(keyset, bias, a, b, beta=beta, alpha=alpha)


_IMPLS = {"aten::mm": _mm, "aten::bmm": _bmm, "aten::addmm": _addmm}


def enabled() -> bool:
    return _state["lib"] is not None


def enable() -> None:
    """Routes aten mm, addmm and bmm on CUDA tensors of float16, bfloat16 and float32 to tritonmm,
    for the whole process, until disable(). Enabling twice is harmless."""
    if enabled():
        return
    _state["original"] = {name: _get_kernel(name) for name in _IMPLS}
    lib = torch.library.Library("aten", "IMPL")
    # torch 2.13+ registers its own Python kernel for CUDA bmm; replacing a Python registration
    # needs allow_override (its default became True in 2.13, and it is missing before 2.11).
    override = {"allow_override": True} if "allow_override" in inspect.signature(lib.impl).parameters else {}
    with warnings.catch_warnings():
        # Replacing aten's CUDA kernels is what enabling asks for; torch 2.11-2.12 warned about it once a
        # process ("Overriding a previously registered kernel", after a first line of its own).
        warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
        for name, fn in _IMPLS.items():
            lib.impl(name.removeprefix("aten::"), fn, "CUDA", with_keyset=True, **override)
    _state["lib"] = lib


def disable() -> None:
    """Gives aten its own kernels back."""
    lib, _state["lib"] = _state["lib"], None
    if lib is not None:
        lib._destroy()


@contextlib.contextmanager
def use_tritonmm():
    """enable() inside the block; on leaving it, the state before it (so blocks nest)."""
    was = enabled()
    enable()
    try:
        yield
    finally:
        if not was:
            disable()
