"""Experiment (session 22, run 1): does do_bench's L2 clearing slow the run it times?

triton.testing.do_bench zeroes a 256 MB buffer before every timed run (clear_cache). An H100's L2 (50 MB) is
write-back, so the run starts under an L2 full of dirty lines, and its first misses write them back to HBM
while it reads. Session 21 saw cuBLAS's kernel at 16x14336x4096 x @ W.T take 42.1 us under torch.profiler and
54.9 us a product in graph replay (the sweep's do_bench of a graph over one operand copy).

Hypothesis: a product that streams its operands from HBM is timed up to ~L2-size / bandwidth (~17 us) slow,
for both libraries alike: decode replays over one or two weight copies 1.2-1.3x slow, compute-bound products
unchanged. A read-only flush (timing.median_ms(flush="read"): the L2 then holds clean lines) should agree with
back-to-back replays (no flush; the rotation keeps the weights cold) and with the profiler's kernel times.

Per shape (bf16, the sweep's operands, copies and graphs; 3 interleaved rounds, medians), us per product:
memset (do_bench), read (read flush), none (10 replays between two events, median of 10), and profiler (the
kernels' device times per replay). Also the read bandwidth of torch.sum over 1 GiB under each flush.

    PYTHONPATH=. python3 notes/experiments/l2_flush.py
"""
import os
import statistics
import tempfile

import torch
from tabulate import tabulate

from bench.common import kernel_times
from bench.sweep import _graph, _products
from tritonmm import timing

os.environ.setdefault("TRITONMM_CACHE_DIR", tempfile.mkdtemp())
SHAPES = [(16, 14336, 4096, "NT"), (12, 5120, 5120, "NT"), (64, 4096, 4096, "NT"), (16, 4096, 4096, "NT"),
          (1, 4096, 14336, "NT"), (64, 8192, 8192, "NT"), (128, 4096, 14336, "NT"), (1536, 1536, 1536, "NN"),
          (4096, 4096, 4096, "NN"), (512, 512, 512, "NN")]


def back_to_back_ms(fn, reps=10, rounds=10):
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


MODES = {"memset": lambda f: timing.median_ms(f), "read": lambda f: timing.median_ms(f, flush="read"),
         "none": back_to_back_ms}

big = torch.randn(1 << 28, device="cuda")
bw = {m: [] for m in MODES}
for _ in range(3):
    for m, t in MODES.items():
        bw[m].append(big.numel() * 4 / t(lambda: big.sum()) / 1e9)
print("read TB/s (torch.sum of 1 GiB):", {m: round(statistics.median(v), 3) for m, v in bw.items()}, flush=True)
read_tbps = statistics.median(bw["read"])
del big

rows = []
for M, N, K, layout in SHAPES:
    sets, calls, _, _ = _products("bf16", M, N, K, layout)
    for call in calls.values():
        call(*sets[0])  # tune outside the timing
    graphs = {name: _graph(call, sets) for name, call in calls.items()}
    times = {(name, m): [] for name in graphs for m in MODES}
    for _ in range(3):
        for name, g in graphs.items():
            for m, t in MODES.items():
                times[name, m].append(t(g.replay) * 1e3 / len(sets))
    prof = {name: sum(us for _, us in kernel_times(g.replay)) / len(sets) for name, g in graphs.items()}
    w_bytes = (M * K + K * N) * 2
    for name in graphs:
        med = {m: statistics.median(times[name, m]) for m in MODES}
        rows.append([f"{M}x{N}x{K} {layout}", len(sets), name, *(f"{med[m]:.2f}" for m in MODES), f"{prof[name]:.2f}",
                     f"{med['memset'] / med['read']:.2f}", f"{w_bytes / med['read'] / 1e6 / read_tbps:.0%}"])
        print(*rows[-1], flush=True)
    x = {m: statistics.median(times["torch", m]) / statistics.median(times["tritonmm", m]) for m in MODES}
    print("  x torch.mm:", {m: round(v, 3) for m, v in x.items()}, flush=True)

print(tabulate(rows, headers=["shape", "copies", "impl", "memset us", "read us", "none us", "profiler us",
                              "memset/read", "operand bytes/read-flushed time, of read BW"]))
