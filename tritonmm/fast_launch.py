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

from . import device, validation

_VERSION = tuple(int(part) for part in triton.__version__.split(".")[:2])
# The call signature below was read in the 3.6, 3.7, 3.8 and 3.9 sources (JITFunction.run).
SUPPORTED = (3, 6) <= _VERSION <= (3, 9) and not validation.interpreting()
_state = {"enabled": SUPPORTED}


def enabled() -> bool:
    return _state["enabled"]


def disable() -> None:
    """Every later launch goes through kernel[grid] (used when a direct call is refused)."""
    _state["enabled"] = False


class Compiled:
    """One compiled kernel, its grid and every argument after the tensors, ready to relaunch.
    It keeps no tensor: a cache entry must not keep a call's operands alive."""

    def __init__(self, compiled_kernel, grid, args_after_tensors: tuple):
        self.run = compiled_kernel.run  # a property: loads the module and function first
        self.function = compiled_kernel.function
        self.metadata = compiled_kernel.packed_metadata
        self.kernel = compiled_kernel
        self.grid = (tuple(grid) + (1, 1))[:3]
        self.rest = args_after_tensors
        # The TMA kernel makes its descriptors on the device, in scratch memory (device.py).
        self.scratch = getattr(getattr(compiled_kernel, "metadata", None), "global_scratch_size", 0) > 0

    def __call__(self, tensors: tuple, stream) -> bool:
        """Launches on ``stream`` with ``tensors`` = every tensor argument in order; False (nothing
        launched) if this Triton refuses the direct call."""
        if self.scratch:
            device.use_scratch_allocator()
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
