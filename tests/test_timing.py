"""timing: the one place that times kernels (device medians) and host launch paths."""
import math

import pytest
import torch

from tritonmm import timing


def test_median_ms_counts_every_benchmark():
    before = timing.calls
    x = torch.randn(64, 64, device="cuda" if torch.cuda.is_available() else "cpu")
    ms = timing.median_ms(lambda: x @ x)
    assert timing.calls == before + 1
    assert math.isfinite(ms) and ms > 0
    low, mid = timing.median_ms(lambda: x @ x, quantiles=[0.2, 0.5])
    assert 0 < low <= mid


def test_tflops():
    assert timing.tflops(1000, 1000, 1000, 1.0) == pytest.approx(2.0)


@pytest.mark.gpu
def test_host_us_per_call_times_the_host_path():
    x = torch.randn(64, 64, device="cuda")
    us = timing.host_us_per_call(lambda: x.add_(1), calls=200)
    assert 0 < us < 10_000


def test_median_ms_names_its_flushes():
    with pytest.raises(ValueError, match="flush must be .memset. or .read., got .sweep."):
        timing.median_ms(lambda: None, flush="sweep")


@pytest.mark.gpu
def test_read_flushed_median_ms_times_the_run():
    x = torch.randn(512, 512, device="cuda")
    before = timing.calls
    ms = timing.median_ms(lambda: x @ x, flush="read")
    assert timing.calls == before + 1
    assert math.isfinite(ms) and ms > 0
