"""The persistent tuning cache: keys, buckets, round trips, robustness."""
import json

import torch

from tritonmm import cache
from tritonmm.config_space import make_config


def test_key_names_everything_a_config_depends_on():
    key = cache.make_key("NVIDIA H100 80GB HBM3", torch.bfloat16, "native", "tma", "NT", 100, 4096, 14336)
    assert key.startswith("NVIDIA H100 80GB HBM3|triton-")
    assert key.endswith("|bfloat16|native|tma|NT|128x4096x16384")


def test_nearby_shapes_share_a_bucket():
    k = lambda m: cache.make_key("gpu", torch.float16, "native", "tma", "NN", m, 4096, 4096)
    assert k(65) == k(100) == k(128) != k(129)


def test_round_trip_and_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    cfg = make_config(64, 128, 32, 4, 8, GROUP_M=4)
    assert cache.lookup("k") is None
    cache.store("k", cfg, ms=1.5)
    got = cache.lookup("k")
    assert got.kwargs == cfg.kwargs and (got.num_warps, got.num_stages) == (8, 4)
    assert json.loads(cache.cache_file().read_text())["k"]["ms"] == 1.5
    assert cache.clear() == 1 and cache.lookup("k") is None


def test_broken_file_is_a_cold_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    cache.cache_file().write_text("{not json")
    assert cache.lookup("anything") is None
    cache.store("k", make_config(16, 16, 16, 1, 1))
    assert cache.lookup("k") is not None


def test_default_location(monkeypatch, tmp_path):
    monkeypatch.delenv("TRITONMM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.cache_file() == tmp_path / "tritonmm" / "tuning.json"
