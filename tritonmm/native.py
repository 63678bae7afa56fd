"""aten::mm's, addmm's and bmm's CUDA kernels in C++ (native.cpp) under use_tritonmm(), and the fast path of
tritonmm.linear, mm and matmul: a product seen before launches without Python.

The Python kernels that override.py registers cost a crossing into Python, the relaunch key and Triton's
launcher on every call: on the H100 machine's host, 10-38 us a product more than aten's kernel, which is
what an eager decode step is made of (design.md: native-dispatch). With this module's build on disk,
override.enable() registers native.cpp's kernels for aten::mm, addmm and bmm instead, and linear, mm and matmul (of
matrices, or of batches as bmm's) ask it first: a product whose dtype, device, sizes, strides and 16-byte alignments
(of the bias too) equal an earlier call's relaunches that call's kernels from C++ (its staging copies too), the TMA
and Gluon kernels' tensor maps encoded there (design.md: native-tma); a first call (or a product whose launches it
cannot repeat: clusters, float32, capture, Triton 3.6's descriptors, a batch the planner runs entry by entry) goes
to the Python path, as without it, and ``describe`` tells the C++ side how to repeat it.

TRITONMM_NATIVE: "auto" (the default) uses the build where it is on disk; "1" builds it where first needed
(enable(), or linear, mm or matmul), 25-45 s once per machine, source and torch version (torch's extension cache);
"0" never uses it. ``python -m tritonmm.native`` builds it ahead. Launches are described as Triton 3.6-3.9's
launchers make them (fast_launch.unwrapped: their layouts), so other Triton versions keep the Python path.
"""
import functools
import hashlib
import importlib.util
import os
import warnings
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("native.cpp")

# Where a kernel argument comes from (native.cpp's Source): STAGED_A and STAGED_B are the buffers a staged product's
# copies fill, allocated at each call.
A, B, OUT, WORKSPACE, BIAS, STAGED_A, STAGED_B, NULL_POINTER, VALUE = range(9)
# The tensors of a staging copy's launch (kernels/copy.py: x, y, lo, x2, y2) by the operands it copies
# (staging.cached_copies): one alone is its own pair.
COPY_SOURCES = {"ab": (A, STAGED_A, NULL_POINTER, B, STAGED_B), "a": (A, STAGED_A, NULL_POINTER, A, STAGED_A),
                "b": (B, STAGED_B, NULL_POINTER, B, STAGED_B)}
# Bytes of each integer argument type of a Triton signature.
INT_BYTES = {"i1": 1, "u1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "i64": 8, "u64": 8}

# module: the loaded build; installed: its aten kernels registered; resolved: _built() has looked for it;
# kernels: every Triton CompiledKernel an entry launches, by id, kept alive (a kernel's module could be unloaded
# with it, and an entry holds only its function handle).
_state = {"module": None, "installed": False, "resolved": False, "kernels": {}}


def mode() -> str:
    value = os.environ.get("TRITONMM_NATIVE", "auto").strip().lower()
    if value not in ("auto", "0", "1"):
        raise ValueError(f"TRITONMM_NATIVE must be auto, 0 or 1, got {value!r}")
    return value


def name() -> str:
    """The extension's name, with a hash of its source and of torch's version: either changed is another build
    (torch's extension cache keys builds by Python and CUDA versions, not torch's, whose ABI it links)."""
    return "tritonmm_native_" + hashlib.sha256(SOURCE.read_bytes() + torch.__version__.encode()).hexdigest()[:16]


def cuda_include():
    """The folder of CUDA's headers torch's CUDA_HOME names (CUDA_HOME, else found from nvcc), or None where it
    holds none (an nvcc outside a toolkit makes torch guess /usr/local)."""
    from torch.utils.cpp_extension import CUDA_HOME
    include = None if CUDA_HOME is None else Path(CUDA_HOME) / "include"
    return include if include is not None and (include / "cuda_runtime_api.h").exists() else None


def build(verbose: bool = False):
    """Compiles native.cpp (or loads torch's cached build of it) and returns the module."""
    from torch.utils.cpp_extension import CUDA_HOME, load
    include = cuda_include()
    if include is None:
        raise RuntimeError(f"tritonmm's native dispatch needs CUDA's headers, not found under CUDA_HOME={CUDA_HOME}: "
                           "set CUDA_HOME to the CUDA toolkit (e.g. /usr/local/cuda)")
    # Host code only: CUDA's headers and c10's CUDA library, no nvcc and no architecture to compile for.
    return load(name=name(), sources=[str(SOURCE)], extra_cflags=["-O2"], extra_include_paths=[str(include)],
                extra_ldflags=["-lc10_cuda"], verbose=verbose)


def _on_disk():
    """The module, where torch's extension cache holds its build; None otherwise (nothing is compiled)."""
    from torch.utils.cpp_extension import _get_build_directory
    path = Path(_get_build_directory(name(), False)) / f"{name()}.so"
    if not path.exists():
        return None
    try:
        spec = importlib.util.spec_from_file_location(name(), path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as e:  # a broken build: the Python kernel serves, and says why once
        warnings.warn(f"tritonmm: the native dispatch build at {path} did not load ({e}); rebuild it with "
                      f"python -m tritonmm.native", RuntimeWarning, stacklevel=3)
        return None
    return module


def module():
    """The module override.enable() installs, or None: TRITONMM_NATIVE 0, no CUDA, a launcher layout other
    that direct launches do not know (fast_launch.direct_layout), or (auto) no build on disk."""
    from . import fast_launch
    if mode() == "0" or not torch.cuda.is_available() or not fast_launch.direct_layout():
        return None
    if _state["module"] is None:
        _state["module"] = build() if mode() == "1" else _on_disk()
    return _state["module"]


def install(mm, addmm, bmm) -> None:
    """Registers native.cpp's aten::mm, addmm and bmm for CUDA, with the Python kernels for the calls it does not
    repeat: ``mm(a, b, describe)``, ``addmm(bias, a, b, beta, alpha, describe)`` and ``bmm(a, b, describe)``, each
    returning (result, description or None) (``describe``: whether to describe the call's launches, for its entry)."""
    module().install(mm, addmm, bmm)
    _state["installed"] = True


def uninstall() -> None:
    if _state["installed"]:
        _state["installed"] = False
        _state["module"].uninstall()


def clear() -> None:
    """Forgets every repeated product: whatever relaunch keys on besides the operands changed (the tuner's
    generation, any change to the thresholds' overrides). (Triton's launcher refusing a direct call, fast_launch.disable, leaves
    them be: native.cpp launches through the driver.)"""
    if _state["module"] is not None:
        _state["module"].clear()


def stats():
    """(hits, misses, entries, entries repeated from C++) since the build loaded, or None when none is loaded."""
    return None if _state["module"] is None else _state["module"].stats()


def _built():
    """The loaded build, looked for at the first call; None without one."""
    built = _state["module"]
    if built is None and not _state["resolved"]:  # without a build (the default) every call comes here: one lookup
        _state["resolved"] = True
        built = module()
    return built


# The tensor types C++ repeats: a subclass keys apart in Python (relaunch.key), and may have no storage.
PLAIN = (torch.Tensor, torch.nn.Parameter)


def repeat(x, weight, bias):
    """tritonmm.linear's x @ weight.T (+ bias) repeated from C++ (x of any leading dims, flattened there as linear
    flattens it, and the result shaped as linear's; bias (N,) or None): the result; None where the product is not
    known yet (the caller plans it, then calls remember); False where it is left to Python (no build loaded, or
    launches C++ cannot repeat)."""
    built = _built()
    if built is None or type(x) not in PLAIN:
        return False
    return built.repeat(x, weight, bias)


def repeat_mm(a, b, out=None):
    """tritonmm.mm's and matmul's a @ b (2-D, or 3-D as bmm's batch; no precision given) repeated from C++, as
    repeat; into ``out`` where given and it has the layout the product's entry allocates, 16-byte aligned, sharing
    no memory with a or b and asking no gradient (otherwise False: Python's path serves it, and its checks name what
    is wrong)."""
    built = _built()
    if built is None or type(a) not in PLAIN or type(b) not in PLAIN or (out is not None and type(out) is not
                                                                         torch.Tensor):
        return False
    return built.repeat_mm(a, b, out)


def remember(a, b, bias, entry) -> None:
    """Makes a @ b (+ bias)'s entry in C++ from its relaunch entry (None or one describe refuses: Python serves it)."""
    _state["module"].remember(a, b, bias, describe(entry))


def describe(entry):
    """How native.cpp repeats a relaunch entry (relaunch.Entry) of a @ b, or None where it cannot: a launch that is not
    a direct one (fast_launch.unwrapped), copies not all cached, or a product run as its transpose over copies (their
    launches read the call's operands swapped, which COPY_SOURCES does not say). A product run as its transpose
    reads b where its kernels read A, a where B (design.md: native-eager-tma). Tensor
    descriptors (the TMA and Gluon kernels') are described as maps native.cpp encodes at each launch (_tensor_map);
    launches over row slices, as byte offsets.
    A staged product's copies launch first, into buffers native.cpp allocates as the entry's were (design.md:
    native-staging)."""
    if entry is None or (entry.stage is not None and (entry.copies is None or entry.swapped)):
        return None
    staged = entry.staged or (None, None)  # relaunch.remember: set exactly where entry.stage is
    # The tensors each launch takes, as relaunch._launch_entry passes them (no FP8 scales: 16-bit products).
    a, b = (B, A) if entry.swapped else (STAGED_A if staged[0] else A, STAGED_B if staged[1] else B)
    plain = (a, b, OUT, BIAS, NULL_POINTER, NULL_POINTER)
    tensors = (plain,) * (1 if entry.offsets is None else len(entry.offsets))
    if entry.workspace is not None:  # split-K's slices and their sum: a whole product's, or a wave tail's last
        tensors = tensors[:-2] + ((a, b, WORKSPACE, NULL_POINTER, NULL_POINTER, NULL_POINTER),
                                  (WORKSPACE, OUT, BIAS, NULL_POINTER, NULL_POINTER))
    if len(tensors) != len(entry.launches):
        return None
    parts = entry.offsets or (None,) * len(tensors)
    launches = [_launch(compiled, sources, part) for compiled, sources, part in zip(entry.launches, tensors, parts)]
    if any(launch is None for launch in launches):
        return None
    copies = [_launch(compiled, COPY_SOURCES[which]) for compiled, which in entry.copies or ()]
    if any(launch is None for launch in copies):
        return None
    launches = copies + launches  # the copies first: the product reads their buffers
    shape, strides = entry.out_layout
    buffers = [[] if s is None else [list(s[0]), list(s[1])] for s in staged]
    return list(shape), list(strides), list(entry.workspace or ()), launches, buffers


def _launch(compiled, sources, part=None):
    """(function, grid, threads, shared bytes, PDL, parameters) of a fast_launch.Compiled, or None. ``part``: per
    tensor of the call (a, b, out, bias, scales), the bytes past its address the launch reads it from (None: 0)."""
    if compiled.direct is None or (compiled.descriptors is not None and not compiled.maps):
        return None
    num_warps, num_ctas, shared = compiled.metadata
    cooperative, pdl = compiled.flags
    signature = getattr(compiled.kernel.src, "signature", None)
    if compiled.tensors is not None:
        sources = sources[:compiled.tensors]
    args = (*sources, *compiled.rest)
    if num_ctas != 1 or cooperative or not isinstance(signature, dict) or len(signature) != len(args):
        return None
    maps = len(compiled.maps)  # the first tensors are read through descriptors
    params = []
    for i, (ty, value) in enumerate(zip(signature.values(), args)):
        if ty == "constexpr":
            continue
        offset = (part[i] or 0) if part is not None and i < len(sources) else 0
        if i < maps:
            described = _tensor_map(ty, compiled.descriptors[i], compiled.maps_meta[i])
            if described is None:
                return None
            spec, shape, strides = described
            params.append((value, 128, offset, spec))
            params += [_value(4, n) for n in shape] + [_value(8, n) for n in strides]
        elif i < len(sources):  # a tensor argument: a pointer, filled in at each launch
            if not isinstance(ty, str) or not ty.startswith("*"):
                return None
            params.append((value, 8, offset))
        elif ty in INT_BYTES and isinstance(value, int):
            params.append(_value(INT_BYTES[ty], value))
        else:  # floats, tuples, pointers past the tensors: not in tritonmm's kernels
            return None
    params += [(NULL_POINTER, 8, 0), (NULL_POINTER, 8, 0)]  # global and profile scratch (none: unwrapped)
    _state["kernels"][id(compiled.kernel)] = compiled.kernel
    return compiled.function, list(compiled.grid), 32 * num_warps, shared, bool(pdl), params


def _value(size: int, n: int) -> tuple:
    """The parameter of an integer argument of ``size`` bytes: n as its two's complement bits."""
    return VALUE, size, n & ((1 << 8 * size) - 1)


def _tensor_map(ty, desc, meta):
    """((elem type, swizzle, dims, byte strides, box, elem size), shape, strides) of a descriptor argument of type
    ``ty``: what Triton's launchers hand cuTensorMapEncodeTiled for it (driver.py make_tensordesc_arg, driver.c
    fillTMADescriptorTiled: dimensions innermost first, the outer ones' strides in bytes, the host's element type),
    and the shape and strides the kernel takes after the map (i32s, then i64s). None for what native.cpp does not
    encode (a NaN fill, FP4 padding, im2col, TF32 rounding) or a launcher that expands descriptors otherwise."""
    try:
        from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST
        if not isinstance(ty, str) or not ty.startswith("tensordesc<") or meta.get("fp4_padded") or \
                meta.get("is_im2col") or getattr(desc, "padding", "zero") != "zero" or \
                getattr(desc, "round_f32_to_tf32", False):
            return None
        shape, strides, size, block = list(desc.shape), list(desc.strides), meta["elem_size"], list(meta["block_size"])
        if len(shape) != len(strides) or len(block) != len(shape) or strides[-1] != 1 or not 1 <= len(shape) <= 5:
            return None
        if _expanded(ty, meta) != ["nvTmaDesc"] + ["i32"] * len(shape) + ["i64"] * len(shape):
            return None
        spec = (TMA_DTYPE_DEVICE_TO_HOST[meta["elem_type"]], int(meta["swizzle"]), shape[::-1],
                [size * s for s in strides[:-1]][::-1], block[::-1], size)
        return spec, shape, strides
    except (AttributeError, ImportError, KeyError, TypeError, ValueError):
        return None


@functools.cache
def _expand_signature():
    """Triton's expand_signature (3.8-3.9's; Triton 3.6 has none: bench/results/native_tma/diag36.log), or None."""
    try:
        from triton.backends.driver import expand_signature
    except ImportError:
        try:
            from triton.backends.nvidia.driver import expand_signature
        except ImportError:
            return None
    return expand_signature


def serves(dtype) -> bool:
    """Whether native.cpp may repeat eager calls of products of this dtype: 16-bit ones (native.cpp keeps no other),
    with a build loaded (module)."""
    return dtype in (torch.float16, torch.bfloat16) and module() is not None


def repeats_tma(served: bool) -> bool:
    """Whether native.cpp repeats the TMA kernel's launches of a call it serves (``served``: planner.product's), for
    the rules' eager bars (rules.graph_bars, eager_bars)."""
    return served and describes_descriptors()


def describes_descriptors() -> bool:
    """Whether describe follows this Triton's launchers for launches that take tensor descriptors (the TMA and Gluon
    kernels'): 3.8-3.9's expand_signature gives their layout; Triton 3.6 has none (design.md: native-tma)."""
    return _expand_signature() is not None


def _expanded(ty, meta):
    """The launcher's argument types for one descriptor of type ``ty`` (Triton's expand_signature), or None."""
    expand_signature = _expand_signature()
    if expand_signature is None:
        return None
    try:
        return list(expand_signature([ty], [meta], "nvTmaDesc"))
    except Exception:  # another version's arguments: not described
        return None


if __name__ == "__main__":
    print(build(verbose=True).__file__)
