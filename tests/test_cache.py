"""The persistent tuning cache: keys, buckets, round trips, robustness."""
import json
import multiprocessing
import os
import warnings

import pytest
import torch
from filelock import FileLock

from tritonmm import cache
from tritonmm.config_space import make_config

CFG = make_config(64, 128, 32, 4, 8, GROUP_M=4)
GOOD = {"tile": dict(CFG.kwargs), "num_warps": 8, "num_stages": 4}


@pytest.fixture(autouse=True)
def fresh_cache(tmp_path, monkeypatch):
    """Each test gets its own cache directory and a process that has warned about nothing."""
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    cache._warned.clear()
    cache._loaded.clear()
    yield
    cache._warned.clear()
    cache._loaded.clear()


def cache_warnings(*actions, times=3) -> list:
    """The RuntimeWarnings' messages from running every action `times` times; Python's own
    once-per-location filter is off, so any deduplication seen is cache.py's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(times):
            for action in actions:
                action()
    return [str(w.message) for w in caught if w.category is RuntimeWarning]


def test_key_names_everything_a_config_depends_on():
    key = cache.make_key("NVIDIA H100 80GB HBM3", torch.bfloat16, "native", "tma", "NT", 100, 4096, 14336)
    assert key.startswith("NVIDIA H100 80GB HBM3|triton-")
    assert key.endswith("|bfloat16|native|tma|NT|128x4096x16384")


def test_nearby_shapes_share_a_bucket():
    k = lambda m: cache.make_key("gpu", torch.float16, "native", "tma", "NN", m, 4096, 4096)
    assert k(97) == k(100) == k(128) != k(129)
    assert k(65) == k(96) != k(97)  # half-octave buckets


def test_a_partial_last_k_step_tunes_apart():
    """3000x3008x3000 shares 3072^3's buckets but not its best config (config_space.tuning_shape)."""
    k = lambda m, n, kk: cache.make_key("gpu", torch.bfloat16, "native", "tma", "NN", m, n, kk)  # noqa: E731
    assert k(3000, 3008, 3000) != k(3072, 3072, 3072) == k(3000, 3008, 2560)
    assert k(3000, 3008, 3000) == k(3072, 3072, 2999) and k(3072, 3072, 3072).endswith("|3072x3072x3072")


def test_round_trip_and_clear():
    assert cache.lookup("k") is None
    cache.store("k", CFG, ms=1.5)
    got = cache.lookup("k")
    assert got.kwargs == CFG.kwargs and (got.num_warps, got.num_stages) == (8, 4)
    assert json.loads(cache.cache_file().read_text())["k"]["ms"] == 1.5
    assert cache.clear() == 1 and cache.lookup("k") is None


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("TRITONMM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_file() == tmp_path / "tritonmm" / "tuning.json"


UNUSABLE = {
    "truncated": b'{"k": {"tile": {"BLOCK_M": 64, "BL',
    "empty": b"",
    "not JSON": b"BLOCK_M=64 BLOCK_N=128\n",
    "not UTF-8": b"\xff\xfe\x00garbage",
    "JSON list": json.dumps([{"k": GOOD}]).encode(),
}


@pytest.mark.parametrize("content", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_file_is_a_cold_cache_warned_once_and_never_overwritten(content):
    path = cache.cache_file()
    path.write_bytes(content)
    messages = cache_warnings(lambda: cache.lookup("k"), lambda: cache.store("k", CFG))
    assert len(messages) == 1 and str(path) in messages[0] and "--clear" in messages[0]
    assert cache.lookup("k") is None
    assert path.read_bytes() == content


def test_clear_removes_an_unusable_file():
    cache.cache_file().write_bytes(UNUSABLE["truncated"])
    assert cache_warnings(cache.clear) == [] and not cache.cache_file().exists()
    cache.store("k", CFG)
    assert cache.lookup("k").kwargs == CFG.kwargs


def test_malformed_entries_are_skipped_and_good_ones_served():
    bad = {
        "no tile": {"num_warps": 4, "num_stages": 3},
        "no num_warps": {"tile": GOOD["tile"], "num_stages": 3},
        "string tile value": {**GOOD, "tile": {**GOOD["tile"], "BLOCK_M": "64"}},
        "unknown tile param": {**GOOD, "tile": {**GOOD["tile"], "BLOCK_Q": 2}},
        "not an object": 42,
    }
    path = cache.cache_file()
    path.write_text(json.dumps({"good": GOOD, **bad}))
    messages = cache_warnings(*[lambda k=k: cache.lookup(k) for k in ["good", *bad]])
    assert len(messages) == 1 and str(path) in messages[0]
    assert cache.lookup("good").kwargs == CFG.kwargs
    assert all(cache.lookup(k) is None for k in bad)
    # A store adds to the file and keeps the malformed entries as they were: nothing the user had is lost.
    cache.store("new", CFG)
    assert json.loads(path.read_text()) == {"good": GOOD, **bad, "new": GOOD}


def test_unreadable_file_is_a_cold_cache_warned_once():
    path = cache.cache_file()
    path.write_text(json.dumps({"k": GOOD}))
    content = path.read_bytes()
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("this user (root?) reads a file whatever its mode")
        messages = cache_warnings(lambda: cache.lookup("k"), lambda: cache.store("k2", CFG))
        assert cache.lookup("k") is None
    finally:
        path.chmod(0o644)
    assert len(messages) == 1 and str(path) in messages[0]
    assert path.read_bytes() == content


def test_cache_dir_that_cannot_be_created_skips_stores(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path / "a-file" / "cache"))
    messages = cache_warnings(lambda: cache.store("k", CFG), lambda: cache.lookup("k"))
    assert len(messages) == 1 and "TRITONMM_CACHE_DIR" in messages[0]
    assert cache.lookup("k") is None and cache.clear() == 0


def test_read_only_cache_dir_still_serves_its_entries(tmp_path):
    cache.store("k", CFG)
    content = cache.cache_file().read_bytes()
    tmp_path.chmod(0o555)
    try:
        if os.access(tmp_path, os.W_OK):
            pytest.skip("this user (root?) writes a directory whatever its mode")
        messages = cache_warnings(lambda: cache.store("k2", CFG))
        assert cache.lookup("k").kwargs == CFG.kwargs and cache.lookup("k2") is None
    finally:
        tmp_path.chmod(0o755)
    assert len(messages) == 1 and str(tmp_path) in messages[0]
    assert cache.cache_file().read_bytes() == content


def test_a_held_lock_times_out_into_a_warning(monkeypatch):
    monkeypatch.setattr(cache, "_LOCK_TIMEOUT_S", 0.05)
    with FileLock(f"{cache.cache_file()}.lock"):
        messages = cache_warnings(lambda: cache.store("k", CFG))
    assert len(messages) == 1 and "lock" in messages[0]
    assert cache.lookup("k") is None


WORKERS, STORES = 6, 20


def _store_from_worker(worker: int, start) -> None:
    """One tuning process: half its keys its own, half the same in every worker."""
    start.wait(timeout=120)  # all at once, after the slow imports
    for i in range(STORES // 2):
        cache.store(f"worker{worker}-{i}", CFG, worker=worker)
        cache.store(f"shared-{i}", CFG, worker=worker)


def test_concurrent_stores_lose_nothing():
    ctx = multiprocessing.get_context("spawn")  # fresh interpreters, as separate tuning runs are
    start = ctx.Barrier(WORKERS)
    procs = [ctx.Process(target=_store_from_worker, args=(w, start)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
    assert [p.exitcode for p in procs] == [0] * WORKERS
    data = json.loads(cache.cache_file().read_text())
    expected = {f"worker{w}-{i}" for w in range(WORKERS) for i in range(STORES // 2)}
    assert set(data) == expected | {f"shared-{i}" for i in range(STORES // 2)}
    assert all(cache.lookup(k).kwargs == CFG.kwargs for k in data)
    assert not list(cache.cache_dir().glob(".tuning-*"))  # no temp file left behind
