"""The persistent tuning cache: tuned configs on disk, so a new process benchmarks nothing.

One JSON file, ``$TRITONMM_CACHE_DIR/tuning.json`` (default: ``$XDG_CACHE_HOME/tritonmm``,
else ``~/.cache/tritonmm``). An entry's key names everything the best config depends on:
the GPU, the Triton version, dtype, precision, kernel path and operand layout, and the
shape bucket (each dimension rounded up to a power of two, so nearby shapes share a tune).

Triton's own autotuning cache (``cache_results=True``) is keyed by the exact shape and
the kernel's source hash and stores no GPU name, so it cannot share configs across
shapes or say which GPU a config was tuned on; tritonmm keeps its own, and uses Triton's
tuning loop (triton.autotune) to fill it.
"""
import json
import os
import tempfile
from pathlib import Path

import triton

from .config_space import bucket, make_config

_FILE = "tuning.json"
_loaded: dict = {}  # path -> (mtime, entries)


def cache_dir() -> Path:
    if os.environ.get("TRITONMM_CACHE_DIR"):
        return Path(os.environ["TRITONMM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tritonmm"


def cache_file() -> Path:
    return cache_dir() / _FILE


def make_key(device: str, dtype, precision: str, path: str, layout: str, M: int, N: int, K: int) -> str:
    return "|".join([device, f"triton-{triton.__version__}", str(dtype).removeprefix("torch."),
                     precision, path, layout, f"{bucket(M)}x{bucket(N)}x{bucket(K)}"])


def entries() -> dict:
    """Everything the cache file holds, re-read only when the file changes."""
    path = cache_file()
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return {}
    cached = _loaded.get(path)
    if cached is None or cached[0] != mtime:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            data = {}  # a torn or hand-broken file is a cold cache, not a crash
        _loaded[path] = cached = (mtime, data)
    return cached[1]


def lookup(key: str):
    entry = entries().get(key)
    if entry is None:
        return None
    return make_config(num_warps=entry["num_warps"], num_stages=entry["num_stages"], **entry["tile"])


def store(key: str, config: triton.Config, **info) -> None:
    """Adds one entry; the write is atomic (a temp file renamed over the old one)."""
    data = dict(entries())
    data[key] = dict(tile=dict(config.kwargs), num_warps=config.num_warps,
                     num_stages=config.num_stages, **info)
    path = cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tuning-", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def clear() -> int:
    """Empties the cache; returns how many entries it held."""
    n = len(entries())
    cache_file().unlink(missing_ok=True)
    _loaded.clear()
    return n
