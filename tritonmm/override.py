"""Route unchanged models to tritonmm: aten's mm, addmm and bmm on CUDA tensors, as FlagGems'
use_gems() does, through torch.library.

    with tritonmm.use_tritonmm():       # or tritonmm.enable() ... tritonmm.disable()
        loss = model(x).sum()           # forward and backward products run on tritonmm
        loss.backward()

The kernels are registered for the CUDA dispatch key, below autograd: aten's own derivative
formulas still run, and the products they call in the backward pass come here too.
``aten::linear`` reaches these through its decomposition (a 2-D or contiguous 3-D input with
a bias becomes addmm, whose bias add is fused into tritonmm's epilogue; others mm or bmm).
The ``out=`` overloads (mm.out, addmm.out, bmm.out) are taken as well: torch.compile'd code calls
them (inductor's ``extern_kernels.mm(a, b, out=buf)``). While enabled, an inductor graph pass
(inductor_pass.py) also rewrites compiled graphs' products into tritonmm's operators; docs/compile.md.
Anything tritonmm does not take (routing.py: other dtypes, addmm with beta or alpha other than 1,
mixed devices, an out= aten would resize or that shares memory with an input) goes to the kernel
aten had before, fetched from the dispatcher when enabling. In Triton's interpreter (the tests
without a GPU) CPU tensors are taken too, registered for the CPU dispatch key. Where native dispatch is
built (native.py), CUDA's mm, addmm and bmm are native.cpp's kernels instead, which repeat products seen before
from C++ and call the kernels below for the rest.
"""
import contextlib
import functools
import inspect
import warnings

import torch

from . import native, planner, relaunch
from .routing import default_precision, dispatch_keys, takes

_state = {"lib": None}


def _get_kernel(name: str, key: str):
    """The kernel aten has for an operator and dispatch key now (torch.library.get_kernel, torch >=
    2.10; the dispatcher call behind it otherwise)."""
    getter = getattr(torch.library, "get_kernel", None)
    if getter is not None:
        return getter(name, key)
    return torch._C._dispatch_get_computed_kernel_for_dispatch_key(name, getattr(torch._C.DispatchKey, key))


# Each kernel serves an operator and its .out overload: ``out`` is {} or {"out": tensor}, passed on as
# it came, to planner.product or to aten's kernel (``aten``, bound when enabling).
def _mm(aten, keyset, a, b, served=False, **out):
    if takes(a, b, dims=2, **out):
        return planner.product(a, b, precision=default_precision(a.dtype), served=served, **out)
    return aten.call_boxed(keyset, a, b, **out)


def _bmm(aten, keyset, a, b, served=False, **out):
    if takes(a, b, dims=3, **out):
        return planner.product(a, b, precision=default_precision(a.dtype), served=served, **out)
    return aten.call_boxed(keyset, a, b, **out)


def _addmm(aten, keyset, bias, a, b, *, beta=1, alpha=1, served=False, **out):
    if beta == 1 and alpha == 1 and takes(a, b, bias, dims=2, **out):
        try:
            bias.expand(a.shape[0], b.shape[1])
        except RuntimeError:
            pass  # aten raises its own error for a bias that does not broadcast
        else:
            return planner.product(a, b, bias=bias, precision=default_precision(a.dtype), served=served, **out)
    return aten.call_boxed(keyset, bias, a, b, beta=beta, alpha=alpha, **out)


# For native.cpp's kernels, the calls it does not repeat: _mm's, _addmm's and _bmm's result, and where ``describe``
# asks, how to repeat it (native.describe of the relaunch entry the call made or used; None where aten ran it, or
# where the planner ran a batch entry by entry: rules.batch_slices). A call described is planned as one C++ repeats
# (planner.product's ``served``).
def _native_mm(aten, keyset, a, b, describe: bool):
    out = _mm(aten, keyset, a, b, served=describe)
    return out, _description(a, b, None) if describe else None


def _native_addmm(aten, keyset, bias, a, b, beta, alpha, describe: bool):
    out = _addmm(aten, keyset, bias, a, b, beta=beta, alpha=alpha, served=describe)
    return out, _description(a, b, bias) if describe else None


def _native_bmm(aten, keyset, a, b, describe: bool):
    out = _bmm(aten, keyset, a, b, served=describe)
    return out, _description(a, b, None) if describe else None


def _description(a, b, bias):
    return native.describe(relaunch.cached(relaunch.key(a, b, None, bias, "none", default_precision(a.dtype),
                                                        served=True)))


_NATIVE = {"mm": _native_mm, "addmm": _native_addmm, "bmm": _native_bmm}  # in native.install's order

_IMPLS = {"mm": _mm, "mm.out": _mm, "bmm": _bmm, "bmm.out": _bmm, "addmm": _addmm, "addmm.out": _addmm}


def enabled() -> bool:
    return _state["lib"] is not None


def enable() -> None:
    """Routes aten mm, addmm and bmm (and their out= overloads) on CUDA tensors of float16, bfloat16
    and float32 to tritonmm, for the whole process, until disable(), and installs the graph pass that
    puts tritonmm's operators into graphs torch.compile compiles meanwhile. Enabling twice is harmless."""
    if enabled():
        return
    from . import inductor_pass
    inductor_pass.install()  # first: where torch's inductor cannot be imported, nothing has changed
    lib = torch.library.Library("aten", "IMPL")
    try:
        # torch 2.13+ registers its own Python kernel for CUDA bmm; replacing a Python registration
        # needs allow_override (its default became True in 2.13, and it is missing before 2.11).
        override = {"allow_override": True} if "allow_override" in inspect.signature(lib.impl).parameters else {}
        # aten's kernels, every one fetched before any is replaced.
        kernels = {(name, key): _get_kernel(f"aten::{name}", key) for name in _IMPLS for key in dispatch_keys()}
        # aten::mm, addmm and bmm on CUDA in C++ where native.py's build is loaded: repeated calls skip Python.
        repeats = native.module() is not None
        with warnings.catch_warnings():
            # Replacing aten's CUDA kernels is what enabling asks for; torch 2.11-2.12 warned about it once a
            # process ("Overriding a previously registered kernel", after a first line of its own).
            warnings.filterwarnings("ignore", message=r"(?s).*Overriding a previously registered kernel")
            for (name, key), aten in kernels.items():
                if not (repeats and key == "CUDA" and name in _NATIVE):
                    lib.impl(name, functools.partial(_IMPLS[name], aten), key, with_keyset=True, **override)
        if repeats:
            cuda = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA)
            native.install(*(functools.partial(_NATIVE[name], kernels[name, "CUDA"], cuda) for name in _NATIVE))
    except BaseException:  # half enabled is not a state: back to aten's kernels and the user's pass
        native.uninstall()
        lib._destroy()
        inductor_pass.uninstall()
        raise
    _state["lib"] = lib


def disable() -> None:
    """Gives aten its own kernels back, and inductor the post-grad pass it had before enable()."""
    lib, _state["lib"] = _state["lib"], None
    if lib is not None:
        native.uninstall()
        lib._destroy()
        from . import inductor_pass
        inductor_pass.uninstall()


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
