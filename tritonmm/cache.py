"""The persistent tuning cache: tuned configs on disk, so a new process benchmarks nothing.

One JSON file, ``$TRITONMM_CACHE_DIR/tuning.json`` (default: ``$XDG_CACHE_HOME/tritonmm``,
else ``~/.cache/tritonmm``). An entry's key names everything the best config depends on:
the GPU, the Triton version, dtype, precision, kernel path, operand layout with the pointer kernel's
read widths (``@A.B`` where narrower than 16 bytes), ``+c`` where the TMA kernel stores C through pointers,
``+t`` where the tuner times the tall tile, ``~graph`` for a plan only CUDA graphs run, a batch's entry count
(``z`` and its bucket: config_space.batch_bucket), the fused epilogue (bias kind and activation), and the shape
bucket (each dimension rounded up to the next of 2**k and 1.5 * 2**k, so nearby shapes share a tune). A cache
written before batches' keys held their entry count keys a batch on the pointer kernel as the single product of
its entries' shape: ``python -m tritonmm.tune --clear`` empties it.

Triton's own autotuning cache (``cache_results=True``) is keyed by the exact shape and
the kernel's source hash and stores no GPU name, so it cannot share configs across
shapes or say which GPU a config was tuned on; tritonmm keeps its own, and uses Triton's
tuning loop (triton.autotune) to fill it.

Several processes may tune into one cache at once: a store takes a lock file beside the
cache (``tuning.json.lock``), re-reads the file, adds its entry and atomically replaces the
file, so no process's entry is lost. Reads take no lock. A cache that cannot be read or
written is a cold cache, never an error: the fault is warned about once per process, and a
file that is not the cache's JSON is left untouched for the user to inspect or clear.
"""
import json
import os
import tempfile
import warnings
from pathlib import Path

import triton
from filelock import FileLock, Timeout

from .config_space import TILE_PARAMS, make_config, tuning_shape

_FILE = "tuning.json"
_LOCK_TIMEOUT_S = 30  # a store takes milliseconds; longer means a stuck process: tune on without saving
_FIX = "Delete it or run `python -m tritonmm.tune --clear`."
_LEFT_AS_IS = f"it is ignored and left as it is, so tuned configs are not saved. {_FIX}"
_loaded: dict = {}  # path -> (stat stamp, usable entries)
_warned: set = set()  # (path, kind of fault) already warned about in this process


class _Unusable(Exception):
    """The cache file exists but cannot be read as the cache's JSON (already warned about)."""


def cache_dir() -> Path:
    if os.environ.get("TRITONMM_CACHE_DIR"):
        return Path(os.environ["TRITONMM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tritonmm"


def cache_file() -> Path:
    return cache_dir() / _FILE


def make_key(device: str, dtype, precision: str, path: str, layout: str, M: int, N: int, K: int) -> str:
    bm, bn, bk, ragged = tuning_shape(M, N, K)
    return "|".join([device, f"triton-{triton.__version__}", str(dtype).removeprefix("torch."),
                     precision, path, layout, f"{bm}x{bn}x{bk}" + ("+ragged-k" if ragged else "")])


def _warn(path: Path, kind: str, message: str) -> None:
    """Warns once per process per file and kind of fault: a broken cache is consulted on
    every matmul, and one warning says all there is to say."""
    if (path, kind) not in _warned:
        _warned.add((path, kind))
        warnings.warn(f"tritonmm tuning cache {path}: {message}", RuntimeWarning)


def _read(path: Path) -> dict:
    """Every entry the file holds, malformed ones included (a store must keep them), or {}
    where there is no file. Raises _Unusable for a file that is there but unusable."""
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as e:
        _warn(path, "unreadable", f"cannot be read ({e}); tuned configs are neither loaded nor saved. "
                                  f"Fix its permissions, or delete it.")
        raise _Unusable from e
    try:
        data = json.loads(raw)  # from bytes, so invalid UTF-8 is a ValueError like other garbage
    except ValueError as e:
        _warn(path, "not JSON", f"is not JSON ({e}); {_LEFT_AS_IS}")
        raise _Unusable from e
    if not isinstance(data, dict):
        _warn(path, "not an object",
              f"holds a JSON {type(data).__name__}, not an object of entries; {_LEFT_AS_IS}")
        raise _Unusable
    return data


def _valid(entry) -> bool:
    """Whether an entry holds what lookup() builds a config from, with the types it needs."""
    if not isinstance(entry, dict) or not isinstance(entry.get("tile"), dict):
        return False
    tile = entry["tile"]
    numbers = [entry.get("num_warps"), entry.get("num_stages"), *tile.values()]
    return ({"BLOCK_M", "BLOCK_N", "BLOCK_K"} <= tile.keys() <= set(TILE_PARAMS)
            and all(type(n) is int for n in numbers))  # type(), as bool is an int


def _usable(path: Path, data: dict) -> dict:
    """The valid entries: one hand-broken entry costs only itself."""
    bad = sorted(k for k, e in data.items() if not _valid(e))
    if bad:
        _warn(path, "bad entries", f"{len(bad)} entries are malformed and ignored (first: {bad[0]!r}). "
                                   f"{_FIX}")
    return {k: e for k, e in data.items() if k not in bad}


def entries() -> dict:
    """The cache file's usable entries, re-read only when the file changes. No lock: a
    store replaces the file atomically, so a reader sees the old file or the new one."""
    path = cache_file()
    try:
        st = path.stat()
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)  # the inode too: mtime can be coarse
    except OSError:
        stamp = None  # no file, or no access to it: _read tells which
    cached = _loaded.get(path)
    if stamp is None or cached is None or cached[0] != stamp:
        try:
            data = _usable(path, _read(path))
        except _Unusable:
            data = {}
        _loaded[path] = cached = (stamp, data)
    return cached[1]


def lookup(key: str):
    entry = entries().get(key)
    if entry is None:
        return None
    return make_config(num_warps=entry["num_warps"], num_stages=entry["num_stages"], **entry["tile"])


def _write(path: Path, data: dict) -> None:
    """Writes a temp file beside the cache and renames it over the cache: atomic, and
    fsynced first, so a crash leaves the old file or the new one, never a torn one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tuning-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def store(key: str, config: triton.Config, **info) -> None:
    """Adds one entry. Under the lock the file is re-read, not taken from the memo, so
    entries other processes stored since are kept. A cache that cannot be written, or a
    file that is not the cache's JSON, is warned about and the entry is not persisted."""
    entry = dict(tile=dict(config.kwargs), num_warps=config.num_warps, num_stages=config.num_stages, **info)
    path = cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(f"{path}.lock", timeout=_LOCK_TIMEOUT_S):
            data = _read(path)
            data[key] = entry
            _write(path, data)
    except _Unusable:
        pass  # _read warned; the user's file is theirs to fix, not ours to overwrite
    except Timeout:  # before OSError, which it subclasses
        _warn(path, "lock timeout", f"another process held {path}.lock for {_LOCK_TIMEOUT_S} s; "
                                    f"tuned configs are not saved while it does.")
    except OSError as e:
        _warn(path, "unwritable", f"cannot be written ({e}); tuned configs are not saved. Make {path.parent} "
                                  f"writable or set TRITONMM_CACHE_DIR to a writable directory.")


def clear() -> int:
    """Empties the cache, removing even a file that is not the cache's JSON (the user asked);
    returns how many usable entries it held."""
    path = cache_file()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "run --clear" is no news to someone clearing
        n = len(entries())
    if path.parent.is_dir():  # else there is nothing to clear, and nowhere for a lock file
        # Under the lock, so a store that read the file before cannot write it back after.
        with FileLock(f"{path}.lock", timeout=_LOCK_TIMEOUT_S):
            path.unlink(missing_ok=True)
    _loaded.clear()
    _warned.difference_update({w for w in _warned if w[0] == path})  # a new fault here is news again
    return n
