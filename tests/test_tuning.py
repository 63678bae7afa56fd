"""When tuning runs: never by default (a new shape's first call benchmarks nothing), inside
tritonmm.autotuning(), or with TRITONMM_AUTOTUNE=1; cached configs apply either way."""
import pytest
import torch

import tritonmm
from tritonmm import tuning
from conftest import rel_err


@pytest.fixture
def tunes(monkeypatch):
    """Records each product tuning.tune is asked for, and answers with its default config."""
    seen = []
    monkeypatch.setattr(tuning, "tune", lambda product, progress=None: seen.append(product.tuning_key)
                        or (product.heuristic(), {}))
    monkeypatch.setattr(tuning, "_memory", {})
    return seen


def _call(device, M=37, N=29, K=53):
    a, b = torch.randn(M, K, device=device), torch.randn(K, N, device=device)
    out = tritonmm.mm(a, b)
    assert rel_err(out, a, b) < 1e-2  # TF32 or IEEE: either is far inside this
    return out


def test_a_new_shape_is_not_tuned_by_default(monkeypatch, device, tunes):
    monkeypatch.delenv("TRITONMM_AUTOTUNE", raising=False)
    assert not tuning.enabled()
    _call(device)
    assert tunes == []


def test_autotuning_block_tunes_new_shapes_and_nests(monkeypatch, device, tunes):
    monkeypatch.delenv("TRITONMM_AUTOTUNE", raising=False)
    with tritonmm.autotuning():
        with tritonmm.autotuning():
            assert tuning.enabled()
        assert tuning.enabled()
        _call(device, 41, 23, 19)
    assert not tuning.enabled()
    assert len(tunes) == 1
    _call(device, 43, 23, 19)  # a shape of another bucket after the block: the default, untuned
    assert len(tunes) == 1


def test_environment_turns_tuning_on(monkeypatch, device, tunes):
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    assert tuning.enabled()
    _call(device, 45, 31, 17)
    assert len(tunes) == 1
