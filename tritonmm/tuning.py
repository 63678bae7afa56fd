"""Tuning: which config a product runs with (the command line is in tune.py).

A config comes from, in order: this process's memory, the disk cache (cache.py), and then the
default, a config chosen from the shape and the device's facts (config_space.heuristic), with no
benchmarking: a new shape's first call costs at most compiling a kernel variant (design.md:
no-tuning-stall). Tuning (every candidate config timed by timing.py on the product's own launches,
replayed from a CUDA graph so that host time does not hide the kernels; the winner is written to the
cache) runs where asked for: ``python -m tritonmm.tune``, TRITONMM_AUTOTUNE=1, or inside
``with tritonmm.autotuning():``. Default picks are never written to disk.
Nothing is benchmarked where timing is impossible (CUDA-graph capture, torch.compile's
tracing): an untuned shape takes the default there, and may be tuned at a later eager call.
"""
import contextlib
import threading

import torch
import triton
from triton.compiler.errors import CompileTimeAssertionFailure
from triton.runtime.errors import OutOfResources, PTXASError

from . import cache, cost_model, native, thresholds, timing, validation

_memory: dict = {}  # Product.tuning_key -> triton.Config, this process
generation = 0  # bumped whenever _memory changes meaning (a tune, forget()): relaunch.key keys launches on it
# autotuning() blocks entered and not yet left, across threads.
_autotuning = {"depth": 0}
# One tune at a time: two tunes at once would time each other's kernels.
_tuning = threading.Lock()
# A config the compiler or the GPU cannot run (too many registers or too much shared memory for
# an epilogue the space was not pruned for) is timed as infinitely slow, as triton.autotune does.
_UNRUNNABLE = (OutOfResources, PTXASError, CompileTimeAssertionFailure)

def rank(product, timings: dict, graph: bool) -> triton.Config:
    """The best of ``timings`` ({config: median ms}): by device time, or where that is shorter than
    an eager call's host time (graph-timed only, and not for a plan only graphs run; eager timings
    include it), by the host time of the config's launches first, then device time."""
    eager_host = graph and not product.graph_only  # design.md: graph-only-rank
    th = thresholds.for_device(product.facts)  # design.md: host-floor

    host_ms = (lambda launches: th.host_us(launches) * 1e-3) if eager_host else None
    return min(timings, key=lambda cfg: cost_model.floored(timings[cfg], product.launches(cfg), host_ms))


def tune(product, progress=None):
    """Tunes one product over its candidate configs (the pruned space, with split-K variants
    where they apply, and the default config) and caches the winner; the caller makes the product's device current.
    Each config is timed on the product's whole launch sequence (both passes of split-K),
    replayed from a CUDA graph: device time, the cost a captured or long-running model pays, ranked
    against an eager call's host time where that is longer, except for plans only graphs run (rank).
    Returns (best config, {config: median ms} for every config timed)."""
    # The default config is timed too where the space lacks it (the stream model's tiles and splits: design.md:
    # stream-model), so that tuning never ends on a config slower than the one it replaces.
    candidates, default = product.candidates(), product.heuristic()
    candidates += [] if default in candidates else [default]
    with _tuning:
        graph = True
        if len(candidates) == 1:  # nothing to choose: not timed
            timings = {candidates[0]: float("nan")}
        else:
            try:
                timings = _time_all(product, candidates, True, progress)
            except RuntimeError:  # a capture failed: every config timed eagerly, so that all compare alike
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                graph, timings = False, _time_all(product, candidates, False, progress)
    best = rank(product, timings, graph)
    ms = timings[best]
    if ms == float("inf"):  # nothing ran: say so rather than cache a config that fails every call
        raise RuntimeError(f"no config of tritonmm's {product.dtype} space compiles for this {product.M}x"
                           f"{product.N}x{product.K} product on {product.facts.name}: each raised one of "
                           f"{[e.__name__ for e in _UNRUNNABLE]}; pin a smaller one with config=")
    M, N, K = product.M, product.N, product.K
    cache.store(product.cache_key(), best, tuned_shape=[M, N, K], ms=ms,
                tflops=timing.tflops(product.Z * M, N, K, ms))
    _remember(product.tuning_key, best)
    return best, timings


def _time_all(product, candidates, graph: bool, progress) -> dict:
    """{config: median ms}. Timed eagerly, a product whose kernels run shorter than Triton's launch
    path (kernel[grid], 20-40 us a launch) measures the host and ranks its configs by noise; in
    graph replay (25 ms of it: a few hundred captured calls of the smallest products) the device."""
    timings = {}
    for cfg in candidates:
        try:
            product.run(cfg)  # compiles outside any capture; an unrunnable config raises here
            timings[cfg] = timing.median_ms(lambda: product.run(cfg), rep_ms=25 if graph else 100, graph=graph)
        except _UNRUNNABLE:
            timings[cfg] = float("inf")
        if progress is not None:
            progress.update(1)
    return timings


def choose_config(product) -> triton.Config:
    key = product.tuning_key
    cfg = _memory.get(key) or cache.lookup(product.cache_key())
    if cfg is None:
        if not product.can_benchmark:
            return product.heuristic()  # not remembered: the next eager call may tune
        if not enabled():
            # Not remembered under the key either: the key's buckets hold shapes whose waves differ, and the
            # default (cost_model.py) is each exact shape's; relaunch.py caches the shape's launches.
            return product.heuristic()
        cfg, _ = tune(product)
    _remember(key, cfg)
    return cfg


def enabled() -> bool:
    """Whether a product whose config is in no cache is tuned now: inside autotuning(), or with
    TRITONMM_AUTOTUNE=1; otherwise it runs the default config."""
    return _autotuning["depth"] > 0 or validation.autotune_enabled(default=False)


@contextlib.contextmanager
def autotuning():
    """Tunes, inside the block, every product whose config is in no cache (a few seconds a new shape),
    and caches the winners on disk for later processes: ``with tritonmm.autotuning(): model(x)``."""
    _autotuning["depth"] += 1
    try:
        yield
    finally:
        _autotuning["depth"] -= 1


def _remember(key, cfg) -> None:
    """A new key changes no earlier choice; a replaced config does, and bumps the generation."""
    global generation
    if key in _memory and _memory[key] != cfg:
        generation += 1
        native.clear()
    _memory[key] = cfg


def forget() -> None:
    """Drops this process's remembered configs (the disk cache is untouched)."""
    global generation
    _memory.clear()
    generation += 1
    native.clear()
