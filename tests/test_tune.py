"""Tuning: the autotuner fills the cache, a warm cache benchmarks nothing, the CLI works."""
import os
import subprocess
import sys

import pytest
import torch
from conftest import HAS_GPU, rel_err

import tritonmm
from tritonmm import cache, timing, tuning
from tritonmm.product import Product
from tritonmm.tune import operands

SHAPE = (128, 128, 64)
CHILD = """
import torch, tritonmm
from tritonmm import timing
from tritonmm.tune import operands
a, b = operands({M}, {N}, {K}, torch.float32, "NN", "{dev}")
out = tritonmm.matmul(a, b, input_precision="ieee")
ref = a.double() @ b.double()
print("calls", timing.calls, "err", ((out.double() - ref).norm() / ref.norm()).item())
"""


def child(shape, cache_dir, device):
    env = dict(os.environ, TRITONMM_CACHE_DIR=str(cache_dir), TRITONMM_AUTOTUNE="1")
    code = CHILD.format(M=shape[0], N=shape[1], K=shape[2], dev=device)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    words = out.stdout.split()
    return int(words[words.index("calls") + 1]), float(words[words.index("err") + 1])


def test_tune_then_a_new_process_benchmarks_nothing(tmp_path, monkeypatch, device):
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path / "warm"))
    a, b = operands(*SHAPE, torch.float32, "NN", device)
    out = torch.full(SHAPE[:2], float("nan"), device=device)
    launch = Product(a, b, out, "ieee")
    before = timing.calls
    best, timings = tuning.tune(launch)
    assert timing.calls - before == len(timings) > 1  # really benchmarked several configs
    assert best in timings and rel_err(out, a, b) < 1e-5
    assert cache.lookup(launch.cache_key()).kwargs == best.kwargs

    calls, err = child(SHAPE, tmp_path / "warm", device)
    assert calls == 0 and err < 1e-5
    calls, err = child((120, 100, 64), tmp_path / "warm", device)  # same buckets, same kernel path
    assert calls == 0 and err < 1e-5
    calls, err = child(SHAPE, tmp_path / "cold", device)  # the control: an empty cache tunes
    assert calls > 0 and err < 1e-5


def test_autotune_off_uses_the_heuristic_and_writes_nothing(tmp_path, monkeypatch, device):
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "0")
    tuning.forget()
    before = timing.calls
    a, b = operands(96, 80, 72, torch.float16, "NN", device)
    assert rel_err(tritonmm.matmul(a, b), a, b) < 2e-3
    assert timing.calls == before
    assert not cache.cache_file().exists()


def test_autotune_on_in_process_tunes_once_per_bucket(tmp_path, monkeypatch, device):
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    tuning.forget()
    before = timing.calls
    for m in (100, 110, 128):  # one bucket
        a, b = operands(m, 64, 64, torch.float32, "NN", device)
        assert rel_err(tritonmm.matmul(a, b, input_precision="ieee"), a, b) < 1e-5
    first = timing.calls - before
    assert first > 0
    a, b = operands(100, 64, 64, torch.float32, "NN", device)
    tritonmm.matmul(a, b, input_precision="ieee")
    assert timing.calls - before == first
    assert len(cache.entries()) == 1


def run_cli(*args, cache_dir):
    env = dict(os.environ, TRITONMM_CACHE_DIR=str(cache_dir))
    return subprocess.run([sys.executable, "-m", "tritonmm.tune", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def test_cli_list_and_clear(tmp_path):
    env_dir = tmp_path / "c"
    env_dir.mkdir()
    (env_dir / "tuning.json").write_text('{"gpu|triton-x|float16|native|tma|NN|16x16x16": '
                                         '{"tile": {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, '
                                         '"num_warps": 4, "num_stages": 3, "tflops": 1.0}}')
    out = run_cli("--list", cache_dir=env_dir)
    assert out.returncode == 0 and "1 entries" in out.stdout and "16x16x16" in out.stdout
    out = run_cli("--clear", cache_dir=env_dir)
    assert out.returncode == 0 and "cleared 1 entries" in out.stdout
    assert not (env_dir / "tuning.json").exists()


def test_cli_rejects_bad_shapes(tmp_path):
    out = run_cli("--shape", "12x0x4", cache_dir=tmp_path)
    assert out.returncode == 2 and "at least 1" in out.stderr
    out = run_cli("--shape", "12by4", cache_dir=tmp_path)
    assert out.returncode == 2 and "MxNxK" in out.stderr


@pytest.mark.skipif(HAS_GPU, reason="checks the message shown without a GPU")
def test_cli_without_gpu_fails_saying_nothing_was_tuned(tmp_path):
    out = run_cli("--shape", "64x64x64", "--preset", "square", cache_dir=tmp_path)
    assert out.returncode == 1 and "no CUDA GPU" in out.stderr
    assert "none of the 5 shape(s) asked for was tuned" in out.stderr and "wrote" not in out.stdout
    assert not (tmp_path / "tuning.json").exists()
    assert run_cli("--list", cache_dir=tmp_path).returncode == 0  # nothing asked to tune: nothing failed


@pytest.mark.gpu
def test_cli_tunes_and_prints_every_config(tmp_path):
    out = run_cli("--shape", "1024x1024x1024", "--dtype", "bf16", cache_dir=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "configs kept" in out.stdout and "TFLOP/s" in out.stdout and "*" in out.stdout
    assert (tmp_path / "tuning.json").exists()


def test_a_failed_capture_times_every_config_eagerly(tmp_path, monkeypatch, device):
    """Graph timing first; if a capture fails, every config is timed again eagerly, so that no
    graph time is ranked against an eager one, and the tune completes."""
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    a, b = operands(*SHAPE, torch.float32, "NN", device)
    launch = Product(a, b, torch.full(SHAPE[:2], float("nan"), device=device), "ieee")
    asked = []

    def fake(fn, warmup_ms=25, rep_ms=100, quantiles=None, graph=False):
        asked.append(graph)
        if graph and len(asked) == 2:  # the second config's capture fails
            raise RuntimeError("operation not permitted when stream is capturing")
        return 1.0 + len(asked)  # later timings are slower: the first config timed eagerly wins

    monkeypatch.setattr(timing, "median_ms", fake)
    best, timings = tuning.tune(launch)
    eager = asked[2:]
    assert asked[:2] == [True, True] and eager and not any(eager)
    assert len(eager) == len(timings) and best == next(iter(timings))


def test_tuning_times_the_default_where_the_space_lacks_it(tmp_path, monkeypatch, device):
    """A default config outside the tuner's candidates (the stream model's tiles: design.md: stream-model) is
    timed beside them, so that tuning cannot end on a config slower than the default it replaces."""
    from tritonmm import config_space
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    a, b = operands(*SHAPE, torch.float32, "NN", device)
    launch = Product(a, b, torch.full(SHAPE[:2], float("nan"), device=device), "ieee")
    default = config_space.make_config(16, 32, 32, 2, 4)  # in no float32 space
    assert default not in launch.candidates()
    monkeypatch.setattr(Product, "heuristic", lambda self: default)
    ran = []
    monkeypatch.setattr(tuning, "_time_all", lambda product, cands, graph, progress: ran.extend(cands) or
                        {c: 0.5 if c == default else 1.0 for c in cands})
    best, timings = tuning.tune(launch)
    assert best == default and ran[-1] == default and len(ran) == len(launch.candidates()) + 1
