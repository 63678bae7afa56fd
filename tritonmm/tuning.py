"""Tuning: which config a product runs with (the command line is in tune.py).

A config comes from, in order: this process's memory, the disk cache (cache.py), tuning
(triton.autotune's loop over the pruned config space, timed by timing.py; the winner is
written to the cache), or, with tuning off (TRITONMM_AUTOTUNE=0, the default in the CPU
interpreter), a heuristic chosen from the shape. Heuristic picks are never written to disk.
Nothing is benchmarked where timing is impossible (CUDA-graph capture, torch.compile's
tracing): an untuned shape takes the heuristic there, and is tuned at its next eager call.
"""
import functools
import threading

import triton

from . import cache, config_space, timing, validation
from .kernels.gemm import gemm_kernel
from .kernels.gemm_tma import fit_descriptors, gemm_tma_kernel

_memory: dict = {}  # Product.tuning_key -> triton.Config, this process
generation = 0  # bumped whenever _memory changes meaning (a tune, forget()): plan.py keys launches on it
_active = threading.local()  # the Product being tuned, for the prune hook and the progress bar
# One tune at a time: the autotuners are shared (one per path and family), and their best
# config and timings are read back after each run.
_tuning = threading.Lock()


def _prune_hook(cfgs, nargs, **kwargs):
    return _active.product.prune(cfgs)[0]


def _bench_hook(kernel_call, quantiles):
    result = timing.median_ms(kernel_call, quantiles=quantiles)
    progress = getattr(_active, "progress", None)
    if progress is not None:
        progress.update(1)
    return result


@functools.lru_cache(maxsize=None)
def _autotuner(path: str, family: str):
    kernel, hook = (gemm_tma_kernel, fit_descriptors) if path == "tma" else (gemm_kernel, None)
    space = [triton.Config(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages, pre_hook=hook)
             for c in config_space.space(family)]
    return triton.autotune(configs=space, key=[], prune_configs_by={"early_config_prune": _prune_hook},
                           do_bench=_bench_hook)(kernel)


def tune(product, progress=None):
    """Tunes one product over its pruned config space and caches the winner; the caller makes
    the product's device current. Returns (best config, {config: median ms} for every config timed)."""
    tuner = _autotuner(product.path, config_space.family(product.dtype, product.precision))
    with _tuning:
        tuner.cache.clear()  # tritonmm's cache decides what is already tuned, not the exact-shape one
        # A space pruned to one config is not timed: no timings left over from the last tune.
        tuner.configs_timings = {}
        _active.product, _active.progress = product, progress
        try:
            tuner[product.grid](*product.args, **product.constants)
        finally:
            _active.product = _active.progress = None
        best = config_space.plain(tuner.best_config)
        raw = tuner.configs_timings or {tuner.best_config: [float("nan")]}
    timings = {config_space.plain(c): (t[0] if isinstance(t, (list, tuple)) else t) for c, t in raw.items()}
    ms = timings.get(best, float("nan"))
    M, N, K = product.M, product.N, product.K
    cache.store(product.cache_key(), best, tuned_shape=[M, N, K], ms=ms,
                tflops=timing.tflops(product.Z * M, N, K, ms))
    _remember(product.tuning_key, best)
    return best, timings


def choose_config(product) -> triton.Config:
    key = product.tuning_key
    cfg = _memory.get(key) or cache.lookup(product.cache_key())
    if cfg is None:
        if not product.can_benchmark:
            return product.heuristic()  # not remembered: the next eager call may tune
        if validation.autotune_enabled(default=not validation.interpreting()):
            cfg, _ = tune(product)
        else:
            cfg = product.heuristic()
    _remember(key, cfg)
    return cfg


def _remember(key, cfg) -> None:
    """A new key changes no earlier choice; a replaced config does, and bumps the generation."""
    global generation
    if key in _memory and _memory[key] != cfg:
        generation += 1
    _memory[key] = cfg


def forget() -> None:
    """Drops this process's remembered configs (the disk cache is untouched)."""
    global generation
    _memory.clear()
    generation += 1
