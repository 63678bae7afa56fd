"""Re-launching a compiled kernel without Triton's argument binding: the host cost of small products.

``kernel[grid](...)`` (JITFunction.run) binds and specializes every argument on every call:
about 20 us for a matmul-sized signature on the H100 machine, against about 9 us for the
launch itself, CompiledKernel.run (triton 3.6). A product whose shapes, strides, dtypes,
pointer alignments and config repeat an earlier call's compiles to the same specialization
(Triton specializes ints on == 1 and % 16, pointers on % 16; equal values give equal keys),
so plan.py keeps that call's compiled kernel under a key made of those facts and launches it
directly. The call is the one JITFunction.run itself ends with, the same in Triton 3.6 to
3.9: grid, stream, function, packed metadata, launch metadata, the launch hooks, then every
argument in signature order, constexprs included (their values are ignored). Other Triton
versions, the CPU interpreter, or a TypeError from that call fall back to ``kernel[grid]``.
"""
import triton

from . import validation

_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])
# The call signature below was read in the 3.6, 3.7, 3.8 and 3.9 sources (JITFunction.run).
SUPPORTED = (3, 6) <= _VERSION <= (3, 9) and not validation.interpreting()
_state = {"enabled": SUPPORTED}


def enabled() -> bool:
    return _state["enabled"]


def disable() -> None:
    """Every later launch goes through kernel[grid] (used when a direct call is refused)."""
    _state["enabled"] = False


def _rebase(desc, tensor):
    """``desc`` describing ``tensor``'s memory instead. The launch cache's key fixes shape,
    strides, dtype and alignment, which TensorDescriptor checks when built, so only the base
    changes: the copy skips those checks (1 us a descriptor; from_tensor takes 3.6)."""
    new = object.__new__(type(desc))
    new.__dict__.update(desc.__dict__)
    new.base = tensor  # the launcher reads base.data_ptr(); a transposed view has the same one
    return new


class Compiled:
    """One compiled kernel, its grid and every argument after the tensors, ready to relaunch.
    ``descriptors``: for a TMA kernel, the fitted descriptors of its first launch, which each
    relaunch re-points at its own A, B and C (Triton encodes the tensor maps at launch). They
    are kept without their tensors: a cache entry must not keep a call's operands alive."""

    def __init__(self, compiled_kernel, grid, args_after_tensors: tuple, descriptors=None):
        self.run = compiled_kernel.run  # a property: loads the module and function first
        self.function = compiled_kernel.function
        self.metadata = compiled_kernel.packed_metadata
        self.kernel = compiled_kernel
        self.grid = (tuple(grid) + (1, 1))[:3]
        self.rest = args_after_tensors
        self.descriptors = None if descriptors is None else tuple(_rebase(d, None) for d in descriptors)

    def __call__(self, tensors: tuple, stream) -> bool:
        """Launches on ``stream`` with ``tensors`` = every tensor argument in order (A, B, C first for
        a TMA kernel, whose descriptors are re-pointed at them); False (nothing launched) if
        this Triton refuses the direct call."""
        if self.descriptors is not None:
            tensors = (*(_rebase(d, t) for d, t in zip(self.descriptors, tensors)), *tensors[3:])
        args = tensors + self.rest
        hooks = triton.knobs.runtime
        enter = hooks.launch_enter_hook
        # What JITFunction.run hands the launch hooks; with none installed (None through 3.7, an
        # empty HookChain from 3.8) nobody reads it, and building it costs 1.6 us.
        meta = self.kernel.launch_metadata(self.grid, stream, *args) if enter and getattr(enter, "calls", 1) else None
        try:
            self.run(*self.grid, stream, self.function, self.metadata, meta, enter, hooks.launch_exit_hook, *args)
        except TypeError:  # the launcher parses its arguments before it launches anything
            disable()
            return False
        return True


def current_stream(index: int):
    return triton.runtime.driver.active.get_current_stream(index)
