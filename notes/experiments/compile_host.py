"""Experiment (session 10): why the compile suite's block runs slower compiled than eagerly at M = 16-128,
in mode="reduce-overhead" (CUDA graphs) too (run 2: 0.90x eager; default mode 0.74-0.75x).

The block (bench/suites.py compile_suite) at M = 16 and 128, width 4096: for eager, default-mode compiled
and reduce-overhead calls, the host time a call (wall clock of 200 back-to-back calls, no sync between;
then the queue drained) and the device time a call (CUDA events around the same 200 calls after a sync,
which is the larger of host and device when host-bound), and do_bench's median. Hypothesis: host-bound
in both compiled modes (CUDA-graph trees' Python per call), while eager is device-bound.

    PYTHONPATH=. python3 notes/experiments/compile_host.py

Run 9 ran the same block defined in this script; it is bench/suites.py's MLPBlock now.
"""
import time

import torch
from tabulate import tabulate
from triton.testing import do_bench

from bench.suites import MLPBlock

rows = []
width = 4096
block = MLPBlock(width)
for M in (16, 128):
    x = torch.randn(M, width, device="cuda").bfloat16()
    fns = {"eager": block, "compiled": torch.compile(block, fullgraph=True),
           "reduce-overhead": torch.compile(block, fullgraph=True, mode="reduce-overhead")}
    with torch.no_grad():
        for name, fn in fns.items():
            for _ in range(5):
                fn(x)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                fn(x)
            host = (time.perf_counter() - t0) / 200 * 1e6
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(200):
                fn(x)
            end.record()
            torch.cuda.synchronize()
            wall = start.elapsed_time(end) / 200 * 1e3
            bench = do_bench(lambda: fn(x), warmup=20, rep=200) * 1e3
            rows.append([M, name, f"{host:.1f}", f"{wall:.1f}", f"{bench:.1f}"])
            print(*rows[-1], flush=True)
    torch._dynamo.reset()
print(tabulate(rows, headers=["M", "call", "host us a call", "events us a call", "do_bench us"], disable_numparse=True))
