"""The launch cache: a product whose every checked fact equals an earlier call's relaunches that call's
compiled kernels directly (fast_launch.Compiled), its staging copies repeated, without planning,
checking or Triton's argument binding again. design.md: relaunch-cache.
"""
from typing import NamedTuple

import torch

from . import config_space, device, fast_launch, layout, staging, thresholds, tuning, validation
from .kernels.gemm_tma import gemm_tma_kernel
from .kernels.split_k import split_k_reduce_kernel
from .precision import PRECISIONS, resolve_precision


class Entry(NamedTuple):
    """A product seen before, ready to launch again (fast_launch.Compiled per launch)."""
    launches: tuple
    workspace: tuple | None  # split-K's fp32 (SPLIT_K, M, N), a sliced tail's (SPLIT_K, its rows, N); per call
    spans: tuple  # bytes a, b and out span from their data_ptr: the overlap check of out=
    out_layout: tuple  # (shape, strides) of a result it allocates: new_empty_strided, 0.8 us less than new_empty
    stage: tuple | None  # (stager of a, stager of b), as Product made them
    # Per launch, where it reads and writes in the tensors it takes, in its order: bytes from each one's data_ptr
    # (None: the tensor itself), for launches over parts of them: a wave-tail split's rows (layout.row_offsets). A
    # launch takes the call's (a, b, out, bias, scale_a, scale_b); with a workspace too, a tail in slices of K
    # (Product.steps), its last two take (a, b, workspace, -, -, -), then (workspace, out, bias, scale_a, scale_b).
    # None: every launch takes the tensors whole.
    offsets: tuple | None = None
    index: int | None = None  # the operands' CUDA device (None: not a CUDA device)
    # Where staged, for native.describe: the staged buffers' (shape, strides) per operand (None: read as given), and
    # the copy launches that fill them (staging.cached_copies; None: not all cached).
    staged: tuple | None = None
    copies: tuple | None = None
    # A product run as its transpose (Product.transposed, design.md: stream-transpose, ieee-transpose): its launches
    # take (b.T, a.T, out.T), of the same addresses as (b, a, out); native.cpp repeats it without copies
    # (native.describe).
    swapped: bool = False


# Entry by key(): products seen before relaunch their compiled kernels.
_entries: dict = {}


def _facts(t):
    return None if t is None else (type(t), t.device, t.dtype, t.shape, t.stride(), t.data_ptr() & 15)


# The type of a view of a tensor of each type (a Parameter's is a plain Tensor).
_VIEW_TYPES = {torch.Tensor: torch.Tensor, torch.nn.Parameter: torch.Tensor}


def key(a, b, out, bias, activation, precision, scales=(None, None), out_dtype=None, b_transposed=False,
        served=False):
    """Every fact that the argument checks, the path, the config and Triton's specialization
    of a product depend on: a call whose key equals an earlier call's passes the same checks
    (but out='s overlap, which lookup checks) and launches the same compiled kernels; with the
    tuner's generation and the thresholds' overrides. ``b_transposed``: b is given as b.T (linear's
    weight), and the key is a @ b.T's, without building the view. ``served``: planner.product's, a call native.cpp
    will repeat, which plans on native's bars (rules.eager_bars, graph_bars): its launches are not an unserved
    call's, nor the other way round."""
    # Spelled out for the operands, and _facts only for tensors that are there: every eager call
    # builds this key, and each Python call in it costs a few tenths of a microsecond on the host.
    scale_a, scale_b = scales
    on = a.device
    if b_transposed:  # b.T's facts: w.T costs 0.8 us on the device's host
        type_b, shape_b, stride_b = _VIEW_TYPES.get(type(b)) or type(b.T), b.shape[::-1], b.stride()[::-1]
    else:
        type_b, shape_b, stride_b = type(b), b.shape, b.stride()
    return (type(a), on, a.dtype, a.shape, a.stride(), a.data_ptr() & 15,
            type_b, b.device, b.dtype, shape_b, stride_b, b.data_ptr() & 15,
            None if out is None else _facts(out), None if bias is None else _facts(bias),
            None if scale_a is None else _facts(scale_a), None if scale_b is None else _facts(scale_b),
            out_dtype, activation, precision, on.type == "cuda" and torch.cuda.is_current_stream_capturing(),
            tuning.generation, thresholds.key(), served)


def compiled(plan, launched):
    """What fast_launch needs to relaunch the launches plan.run() made (Product; its staging copies are repeated by
    _launch_entry), or None where a call must re-plan: tracing or graph capture."""
    if any(binary is None for binary, _ in launched) or not plan.can_benchmark:
        return None
    launches = []
    for binary, (kernel, grid, args, constants, _) in launched:  # Triton's compiled kernel; the step it ran
        named = {**dict(zip(kernel.arg_names, args)), **constants}
        # (ws, C, bias, scale_a, scale_b) or (A, B, C, bias, scale_a, scale_b)
        tensors = 5 if kernel is split_k_reduce_kernel else 6
        descriptors = args[:2 + constants["C_DESC"]] if kernel is gemm_tma_kernel else None
        launches.append(fast_launch.Compiled(binary, grid, tuple(named[n] for n in kernel.arg_names[tensors:]),
                                             descriptors))
    return launches


def cached(k):
    """The entry cached under key k, or None (none, or direct launches turned off)."""
    return _entries.get(k) if fast_launch.enabled() else None


def remember(k, ready, product, cfg, a, b, out) -> None:
    """Caches the launches ``ready`` (compiled) that product made under cfg, under key k, for the call's a, b
    and out (of a product run as its transpose too: the caller's); product None: one launch on the caller's operands
    as they are (the Gluon kernel's, planner.as_given_gluon), cfg only a label."""
    rows = product.row_ranges(cfg) if product is not None else None
    # The offsets of each launch's rows in the tensors as the launches take them (copies where staged)
    offsets = tuple(layout.row_offsets(r0, r1, product.a, product.b, product.out, product.bias, *product.scales)
                    for r0, r1 in rows) if rows else None
    # split-K's workspace shape, as Product.steps made it
    workspace = (product.split(cfg), product.M, product.N) if product is not None and len(ready) > 1 and not rows \
        else None
    if rows and len(ready) == 3:  # the tail in slices of K: they read A's rows, their sum writes C's (Entry.offsets)
        head, tail = offsets
        offsets = (head, (*tail[:2], None, None, None, None), (None, *tail[2:]))
        tail_rows = rows[1][1] - rows[1][0]
        workspace = (product.tail_launch(tail_rows)[1], tail_rows, product.N)
    staged = product is not None and product.staged and not config_space.is_gemv(cfg)
    index = device.index(a.device) if a.device.type == "cuda" else None
    buffers = copies = None
    if staged:
        ya, yb = (t if s else None for s, t in zip(product.stagers, (product.a, product.b)))
        buffers = tuple(None if y is None else (tuple(y.shape), y.stride()) for y in (ya, yb))
        copies = staging.cached_copies(product.stagers, *product.given, ya, yb)
    fast_launch.remember(_entries, k, Entry(tuple(ready), workspace, tuple(layout.span(t) for t in (a, b, out)),
                                            (out.shape, out.stride()), tuple(product.stagers) if staged else None,
                                            offsets, index, buffers, copies,
                                            product is not None and product.transposed))


def launch(known, a, b, out, bias, scales=(None, None), out_dtype=None):
    """The result of a product seen before, launched straight from its cache entry ``known``, or None
    (none; out= overlapping an input, which the checks will refuse)."""
    if known is None:
        return None
    if out is None:
        shape, strides = known.out_layout
        out = a.new_empty_strided(shape, strides) if out_dtype is None else \
            a.new_empty_strided(shape, strides, dtype=out_dtype)
    else:
        o, span_a, span_b, span_o = out.data_ptr(), *known.spans
        for t, span in ((a, span_a), (b, span_b)):
            p = t.data_ptr()
            if p < o + span_o and o < p + span:
                return None
    index = known.index
    if index is None or index == torch.cuda.current_device():  # the common case: no device switch
        return _launch_entry(known, a, b, out, bias, scales, index)
    with torch.cuda.device(index):
        return _launch_entry(known, a, b, out, bias, scales, index)


def _launch_entry(known, a, b, out, bias, scales, index):
    """launch's launches, on the current device (the operands'), into out; out, or None if refused."""
    stream = fast_launch.current_stream(index)
    if known.swapped:  # b.T @ a.T into out.T: launches read addresses, the same as b's, out's and the bias's
        a, b = b, a.mT  # a.T a view, as B's stager reads it; A (b.T) has no stager here, its address is b's
    if known.stage is not None:
        a, b = staging.stage(known.stage, a, b)
    if known.offsets is not None:  # parts of the tensors, at addresses: a view costs 2-3.3 us to build
        takes = ((a, b, out, bias, *scales),) * len(known.launches)
        if known.workspace is not None:  # a wave tail in slices of K: the slices, then their sum (Entry.offsets)
            ws = a.new_empty(known.workspace, dtype=torch.float32)
            takes = takes[:-2] + ((a, b, ws, None, None, None), (ws, out, bias, *scales))
        done = all(run(tuple(t if at is None else fast_launch.Address(t.data_ptr() + at) for t, at in zip(given, part)),
                       stream) for run, given, part in zip(known.launches, takes, known.offsets))
    elif known.workspace is None:
        done = known.launches[0]((a, b, out, bias, *scales), stream)
    else:
        ws = a.new_empty(known.workspace, dtype=torch.float32)  # torch.empty parses device too: 0.4-1.0 us more
        first, second = known.launches
        done = first((a, b, ws, None, None, None), stream) and second((ws, out, bias, *scales), stream)
    return out if done else None


def lookup(a, b, out=None, bias=None, activation="none", input_precision=None, matrices=False,
           scales=(None, None), out_dtype=None, b_transposed=False, served=False):
    """For the public ops, before any check: the result of a product whose every checked fact
    equals an earlier call's (key), or None to take the full path. ``matrices``: only 2-D operands
    (torch.mm's rule; a batched product's key would otherwise match); ``b_transposed``: the product
    is a @ b.T; ``served``: the full path would plan the call as one native.cpp repeats (key). Never raises on bad
    arguments: those miss the cache, and the full path's checks name them."""
    if validation.traced(a):
        return None
    try:
        if matrices and (a.dim() != 2 or b.dim() != 2):
            return None
        if input_precision is not None and input_precision not in PRECISIONS:
            return None  # 16-bit products resolve any precision to "native": the checks refuse it
        if not fast_launch.enabled():
            return None
        known = _entries.get(key(a, b, out, bias, activation, resolve_precision(a.dtype, input_precision), scales,
                                 out_dtype, b_transposed, served))
    except (AttributeError, TypeError, RuntimeError):  # not tensors, unhashable, no storage
        return None
    if b_transposed and known is not None and known.stage is not None:
        b = b.T  # copied into a staging buffer: the view itself (a launch reads only data_ptr, the view's too)
    return launch(known, a, b, out, bias, scales, out_dtype)
