"""Tuning: which config a product runs with (the command line is in tune.py).

A config comes from, in order: this process's memory, the disk cache (cache.py), tuning
(triton.autotune's loop over the pruned config space, timed by timing.py; the winner is
written to the cache), or, with tuning off (TRITONMM_AUTOTUNE=0, the default in the CPU
interpreter), a heuristic chosen from the shape. Heuristic picks are never written to disk.
"""
import functools
import threading

import triton

from . import cache, config_space, timing, validation

_memory: dict = {}  # Launch.tuning_key -> triton.Config, this process
_active = threading.local()  # the Launch being tuned, for the prune hook and the progress bar


def _prune_hook(cfgs, nargs, **kwargs):
    return _active.launch.prune(cfgs)[0]


def _bench_hook(kernel_call, quantiles):
    result = timing.median_ms(kernel_call, quantiles=quantiles)
    progress = getattr(_active, "progress", None)
    if progress is not None:
        progress.update(1)
    return result


@functools.lru_cache(maxsize=None)
def _autotuner(path: str, family: str):
    from .kernel import matmul_kernel, matmul_tma_kernel
    from .matmul import fit_descriptors
    kernel, hook = (matmul_tma_kernel, fit_descriptors) if path == "tma" else (matmul_kernel, None)
    space = [triton.Config(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages, pre_hook=hook)
             for c in config_space.space(family)]
    return triton.autotune(configs=space, key=[], prune_configs_by={"early_config_prune": _prune_hook},
                           do_bench=_bench_hook)(kernel)


def tune(launch, progress=None):
    """Tunes one product over its pruned config space and caches the winner.
    Returns (best config, {config: median ms} for every config timed)."""
    tuner = _autotuner(launch.path, config_space.family(launch.dtype, launch.precision))
    tuner.cache.clear()  # tritonmm's cache decides what is already tuned, not the exact-shape one
    _active.launch, _active.progress = launch, progress
    try:
        tuner[launch.grid](*launch.args, **launch.constants)
    finally:
        _active.launch = _active.progress = None
    best = config_space.plain(tuner.best_config)
    raw = getattr(tuner, "configs_timings", None) or {tuner.best_config: [float("nan")]}
    timings = {config_space.plain(c): (t[0] if isinstance(t, (list, tuple)) else t) for c, t in raw.items()}
    ms = timings.get(best, float("nan"))
    cache.store(launch.cache_key(), best, tuned_shape=[launch.M, launch.N, launch.K], ms=ms,
                tflops=timing.tflops(launch.M, launch.N, launch.K, ms))
    _memory[launch.tuning_key] = best
    return best, timings


def choose_config(launch) -> triton.Config:
    key = launch.tuning_key
    cfg = _memory.get(key) or cache.lookup(launch.cache_key())
    if cfg is None:
        if validation.autotune_enabled(default=not validation.interpreting()):
            cfg, _ = tune(launch)
        else:
            cfg = launch.heuristic()
    _memory[key] = cfg
    return cfg


def forget() -> None:
    """Drops this process's remembered configs (the disk cache is untouched)."""
    _memory.clear()
