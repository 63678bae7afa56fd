"""Experiment (session 22, run 2): which kernel path should decode products take?

plan._few_tiles sends a product to the pointer kernel (split-K, narrow tiles) when it has at most
FEW_TILES_PER_SM x SMs output tiles of 64x64: M of 1-64 against N = 4096 (64 tiles for 132 SMs) does, N = 5120
(80 tiles) does not, so a 12x5120x5120 x @ W.T runs on the TMA kernel (64x128, split 3) in a graph. Run 1
(l2_flush.py, read-flushed graph replay) had it at 0.87x cuBLAS and 67% of the read bandwidth, while 16x4096x4096
on the pointer kernel ran 1.08x; decode_swap.py's 16x4096x14336 and 64x4096x14336 (pointer) 1.01-1.02x.

Hypothesis: for M <= 64 the pointer kernel's narrow tiles (64x32x256, split-K) stream the weight at least as
fast as the TMA kernel whatever N is: forced onto the pointer path, the 5120- and 8192-wide decode products reach
~1.0x where the TMA kernel runs 0.87-0.98.

Per shape (bf16 x @ W.T, the sweep's operands, copies and graphs; bench.common.device_ms, 3 interleaved rounds):
torch.mm, tritonmm as planned, tritonmm with every product on the pointer path (FEW_TILES_PER_SM huge), and on
the TMA path (FEW_TILES_PER_SM = 0, TMA_MIN_MACS = 0); each tuned cold at its first call. Weight bytes over time
as a share of the read bandwidth (torch.sum over 1 GiB, device_ms).

    PYTHONPATH=. python3 notes/experiments/decode_paths.py [MxNxK ...]
"""
import os
import statistics
import sys
import tempfile

os.environ.setdefault("TRITONMM_CACHE_DIR", tempfile.mkdtemp())

import torch  # noqa: E402
from tabulate import tabulate  # noqa: E402

import tritonmm  # noqa: E402
from bench.common import device_ms, interleaved_times, rel_err, tritonmm_config  # noqa: E402
from bench.sweep import _graph, _products  # noqa: E402
from tritonmm import plan  # noqa: E402

SHAPES = [(12, 5120, 5120), (52, 5120, 5120), (32, 5120, 13824), (16, 13824, 5120), (14, 8192, 8192),
          (64, 8192, 8192), (40, 8192, 3072), (57, 6144, 2048), (26, 8192, 28672)]
if sys.argv[1:]:
    SHAPES = [tuple(map(int, a.split("x"))) for a in sys.argv[1:]]
VARIANTS = {"planned": {}, "pointer": {"FEW_TILES_PER_SM": 1e9},
            "tma": {"FEW_TILES_PER_SM": 0, "TMA_MIN_MACS": 0}}

big = torch.randn(1 << 28, device="cuda")
read_tbps = big.numel() * 4 / device_ms(lambda: big.sum()) / 1e9
del big
print(f"read bandwidth (torch.sum of 1 GiB): {read_tbps:.2f} TB/s", flush=True)


def under(constants, fn):
    saved = {k: getattr(plan, k) for k in constants}
    for k, v in constants.items():
        setattr(plan, k, v)
    try:
        return fn()
    finally:
        for k, v in saved.items():
            setattr(plan, k, v)


rows = []
for M, N, K in SHAPES:
    sets, calls, reference, _ = _products("bf16", M, N, K, "NT")
    ref = reference(*sets[-1])
    graphs, errs, configs = {"torch": _graph(calls["torch"], sets)}, {}, {}
    for name, constants in VARIANTS.items():
        out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")

        def call(a, b, out=out):
            return tritonmm.matmul(a, b, out=out)
        under(constants, lambda: call(*sets[0]))  # tunes eagerly, as the sweep does before capture
        graphs[name] = under(constants, lambda: _graph(call, sets))
        configs[name] = under(constants, lambda: tritonmm_config(*sets[0], captured=True)[0])
        graphs[name].replay()
        torch.cuda.synchronize()
        errs[name] = rel_err(out, ref)
    times = interleaved_times({k: g.replay for k, g in graphs.items()}, rounds=3)
    us = {k: statistics.median(v) * 1e3 / len(sets) for k, v in times.items()}
    for k in graphs:
        rows.append([f"{M}x{N}x{K}", len(sets), k, configs.get(k, "cuBLAS"), f"{us[k]:.2f}", f"{us['torch'] / us[k]:.2f}",
                     f"{N * K * 2 / us[k] / 1e6 / read_tbps:.0%}", f"{errs[k]:.1e}" if k in errs else ""])
        print(" | ".join(map(str, rows[-1])), flush=True)
    del graphs, sets
print(tabulate(rows, headers=["shape", "copies", "impl", "config", "us", "x torch.mm", "weight/read BW", "rel err"],
               disable_numparse=True))
