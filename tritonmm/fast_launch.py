"""Re-launching a compiled kernel without Triton's argument binding: the host cost of small products.

``kernel[grid](...)`` (JITFunction.run) binds and specializes every argument on every call:
about 20 us for a matmul-sized signature on the H100 machine, against about 9 us for the
launch itself, CompiledKernel.run (triton 3.6). A product whose shapes, strides, dtypes,
pointer alignments and config repeat an earlier call's compiles to the same specialization
(Triton specializes ints on == 1 and % 16, pointers on % 16; equal values give equal keys),
so relaunch.py keeps that call's compiled kernel under a key made of those facts and launches it
directly. The call is the one JITFunction.run itself ends with, the same in Triton 3.6 to
3.9: grid, stream, function, packed metadata, launch metadata, the launch hooks, then every
argument in signature order, constexprs included (their values are ignored). Other Triton
versions, the CPU interpreter, or a TypeError from that call fall back to ``kernel[grid]``.

Below that call, Triton's launcher (CudaLauncher) still runs Python on every launch: for a TMA kernel it
expands each host-side descriptor into its tensor map, shape and strides and encodes the map again (3.6: 19.7 us
a 64^3 launch against 8.7 for the pointer kernel's; design.md: direct-launch). Where the launcher has 3.6's or
3.7-3.9's layout (``unwrapped``) and no launch hook is installed, Compiled calls the C launch function under it,
with each descriptor's expansion cached by the address it describes: a tensor map encodes the address, shape,
strides and tile, and the cache key fixes all but the address. Other layouts keep Triton's launcher.
"""
import inspect

import triton

from . import validation
from .kernels import version

# The call signature below was read in the 3.6, 3.7, 3.8 and 3.9 sources (JITFunction.run).
SUPPORTED = (3, 6) <= version(triton.__version__) <= (3, 9) and not validation.interpreting()
_state = {"enabled": SUPPORTED}

# Tensor-map expansions kept per descriptor of a compiled launch, by the address they describe: the
# weights of one shape in a model (a few hundred at most) and the allocator's recycled activation
# buffers. An expansion is a 128-byte map and four ints (about 0.3 KB); past the bound the oldest goes.
MAPS_PER_DESCRIPTOR = 256


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


# Triton 3.6's CudaLauncher: __call__(gridX, gridY, gridZ, stream, function, *args) calls
# self.launch(grid, stream, function, cooperative, pdl, global scratch, profile scratch, *args), where
# self.launch is the C function, or for a kernel with tensor descriptors a Python closure that
# expands each (make_tensordesc_arg) before calling the C function. Read in the 3.6.0 sources.
_LAUNCHER_CALL_36 = ["self", "gridX", "gridY", "gridZ", "stream", "function", "args"]
_ARGS_FORMAT_36 = "iiiKKppOOOOOO"  # the C launch function's leading arguments (driver._BASE_ARGS_FORMAT)
# Triton 3.7-3.9's: __call__(gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata, both launch
# hooks, *args) calls self.launch(grid, stream, function, cooperative, pdl, kernel_metadata, launch_metadata, both
# hooks, global scratch, profile scratch, arg_annotations, kernel_signature, args): the C function parses
# "iiiKKpp(iii)OOOOOOy*O", the arguments one sequence, each descriptor expanded in place by a closure over it
# (3.7 as 3.6's; 3.8-3.9's hands make_tensordesc_args the signature's paths to the descriptors, and
# make_tensordesc_arg a third argument it ignores). Read in the 3.7.1, 3.8.0 and 3.9.0 sources.
_LAUNCHER_CALL_37 = ["self", "gridX", "gridY", "gridZ", "stream", "function", "kernel_metadata", "launch_metadata",
                     "launch_enter_hook", "launch_exit_hook", "args"]
_EXPANDER_CELLS_36 = {"launcher", "tensordesc_indices", "tensordesc_meta"}  # and 3.7's
_EXPANDER_CELLS_38 = {"launcher", "signature", "relevant_paths", "tensordesc_meta", "make_tensordesc_arg"}


def _layout(launcher_type):
    """36 or 37 where ``launcher_type`` (a CudaLauncher class) and the driver module have Triton 3.6's or 3.7-3.9's
    layout (above), else None."""
    try:
        from triton.backends.nvidia import driver as nvidia
        call = list(inspect.signature(launcher_type.__call__).parameters)
    except (AttributeError, ImportError, TypeError, ValueError):
        return None
    if call == _LAUNCHER_CALL_36 and getattr(nvidia, "_BASE_ARGS_FORMAT", None) == _ARGS_FORMAT_36:
        return 36
    if call == _LAUNCHER_CALL_37 and not hasattr(nvidia, "_BASE_ARGS_FORMAT") and \
            all(callable(getattr(nvidia, name, None)) for name in ("annotate_arguments", "make_kernel_signature")):
        return 37
    return None


def direct_layout() -> bool:
    """Whether direct launches are on and Triton's CUDA launcher has a layout they know (3.6's or 3.7-3.9's)."""
    if not enabled():
        return False
    try:
        from triton.backends.nvidia import driver as nvidia
    except ImportError:
        return False
    return _layout(getattr(nvidia, "CudaLauncher", None)) is not None


def unwrapped(run, descriptors: int):
    """(C launch function, the descriptors' tensor-map metadata or None, expand(descriptor, metadata) -> its
    arguments, (arg_annotations, kernel_signature) under 3.7-3.9's layout else None) behind ``run`` (a compiled
    kernel's launcher) when it has a layout above, the kernel needs no scratch memory or instrumentation and its
    tensor descriptors are its first ``descriptors`` arguments; else None."""
    try:
        layout = _layout(type(run))
        if layout is None or run.global_scratch_size or run.profile_scratch_size or getattr(run, "gsan_enabled", False):
            return None
        tail = (run.arg_annotations, run.kernel_signature) if layout == 37 else None
        launch = run.launch
        if not descriptors:  # the C function itself; a Python function here would be an expander
            return None if inspect.isfunction(launch) else (launch, None, None, tail)
        cells = inspect.getclosurevars(launch).nonlocals
        meta = cells.get("tensordesc_meta")
        if set(cells) == _EXPANDER_CELLS_38:
            expand3 = cells["make_tensordesc_arg"]
            expand = lambda arg, metadata: expand3(arg, metadata, None)  # noqa: E731 (3.8's third: unused)
            first = cells["relevant_paths"] == {i: {} for i in range(descriptors)} and \
                list(inspect.signature(expand3).parameters) == ["arg", "metadata", "_"]
        else:
            from triton.backends.nvidia import driver as nvidia
            expand = nvidia.make_tensordesc_arg
            first = set(cells) == _EXPANDER_CELLS_36 and cells["tensordesc_indices"] == set(range(descriptors)) and \
                list(inspect.signature(expand).parameters) == ["arg", "metadata"]
        if not first or inspect.isfunction(cells["launcher"]) or not meta or any(m is None for m in meta):
            return None
        return cells["launcher"], tuple(meta), expand, tail
    except (AttributeError, ImportError, KeyError, TypeError, ValueError):
        return None


def _called(hook) -> bool:
    """Whether a launch hook is installed: Triton 3.6-3.9 keep them in a HookChain (knobs.py), empty
    when none is; None counts as none too."""
    return bool(hook) and bool(getattr(hook, "calls", 1))


class Compiled:
    """One compiled kernel, its grid and every argument after the tensors, ready to relaunch.
    ``descriptors``: for a TMA kernel, the fitted descriptors of its first launch, which each
    relaunch re-points at its own A, B and C (C where it is stored through one; Triton encodes the
    tensor maps at launch). They are kept without their tensors: a cache entry must not keep a call's
    operands alive. ``tensors``: how many of the tensors each call passes the kernel takes, the first ones (a
    kernel whose only tensors are its descriptors); None: all."""

    def __init__(self, compiled_kernel, grid, args_after_tensors: tuple, descriptors=None, tensors=None):
        self.run = compiled_kernel.run  # a property: loads the module and function first
        self.function = compiled_kernel.function
        self.metadata = compiled_kernel.packed_metadata
        self.kernel = compiled_kernel
        self.grid = (tuple(grid) + (1, 1))[:3]
        self.rest = args_after_tensors
        self.tensors = tensors
        self.descriptors = None if descriptors is None else tuple(_rebase(d, None) for d in descriptors)
        direct = unwrapped(self.run, 0 if descriptors is None else len(self.descriptors))
        # tail: (arg_annotations, kernel_signature) where the C function takes 3.7-3.9's arguments
        self.direct, self.maps_meta, self.expand, self.tail = direct or (None, None, None, None)
        self.flags = (self.run.launch_cooperative_grid, self.run.launch_pdl) if direct else None
        # Per descriptor, its expansions by address (direct launches only).
        self.maps = tuple({} for _ in self.descriptors or ()) if direct else ()

    def _expanded(self, tensors: tuple) -> list:
        """The C launcher's arguments for the tensors behind the descriptors (A's, B's, and C's where it has
        one): each descriptor's tensor map, shape and strides, encoded once per address."""
        args = []
        for i, (maps, t) in enumerate(zip(self.maps, tensors)):
            address = t.data_ptr()
            expansion = maps.get(address)
            if expansion is None:
                if len(maps) >= MAPS_PER_DESCRIPTOR:
                    maps.pop(next(iter(maps)), None)  # the oldest (dicts keep insertion order)
                expansion = maps[address] = tuple(self.expand(_rebase(self.descriptors[i], t), self.maps_meta[i]))
            args += expansion
        return args

    def __call__(self, tensors: tuple, stream) -> bool:
        """Launches on ``stream`` with ``tensors`` = every tensor argument in order (A, B and C first for
        a TMA kernel, whose descriptors are re-pointed at them: A's, B's, and C's where it has one); False
        (nothing launched) if this Triton refuses the direct call."""
        if self.tensors is not None:
            tensors = tensors[:self.tensors]
        hooks = triton.knobs.runtime
        enter, leave = hooks.launch_enter_hook, hooks.launch_exit_hook
        if self.direct is not None and not _called(enter) and not _called(leave):
            try:  # the expansion and the C launcher's parsing come before anything is launched
                head = tensors if not self.maps else (*self._expanded(tensors), *tensors[len(self.maps):])
                if self.tail is None:
                    self.direct(*self.grid, stream, self.function, *self.flags, None, None, self.metadata, None, None,
                                None, *head, *self.rest)
                else:
                    self.direct(*self.grid, stream, self.function, *self.flags, self.metadata, None, None, None, None,
                                None, *self.tail, (*head, *self.rest))
            except TypeError:
                disable()
                return False
            return True
        if self.descriptors is not None:
            tensors = (*(_rebase(d, t) for d, t in zip(self.descriptors, tensors)), *tensors[len(self.descriptors):])
        args = tensors + self.rest
        # What JITFunction.run hands the launch hooks; with none to call nobody reads it, and building
        # it costs 1.6 us.
        meta = self.kernel.launch_metadata(self.grid, stream, *args) if _called(enter) else None
        try:
            self.run(*self.grid, stream, self.function, self.metadata, meta, enter, leave, *args)
        except TypeError:  # the launcher parses its arguments before it launches anything
            disable()
            return False
        return True


class Address:
    """A device address where a launch takes a tensor: Triton's launchers read only data_ptr(), of a pointer
    argument and of a descriptor's base (3.6-3.9), and so does Compiled. Launches over parts of a call's tensors
    (relaunch.Entry.offsets) pass these rather than views, which cost 2-3.3 us each to build (design.md:
    relaunch-cache)."""
    __slots__ = ("address",)

    def __init__(self, address: int):
        self.address = address

    def data_ptr(self) -> int:
        return self.address


def current_stream(index: int):
    return triton.runtime.driver.active.get_current_stream(index)


# Launch caches (relaunch.py's, staging.py's copies) hold at most this many entries: a process that sees
# that many distinct products starts its cache over rather than grow without bound.
CACHE_ENTRIES = 4096


def remember(cache: dict, key, entry) -> None:
    """cache[key] = entry, within CACHE_ENTRIES."""
    if len(cache) >= CACHE_ENTRIES:
        cache.clear()
    cache[key] = entry
