"""Is an eager 64^3 call on the TMA kernel host- or device-bound? (session 5, after the TMA kernel
moved to descriptors made on the device.) Per path: host submission time alone (300 calls, well
under the launch queue's depth, no synchronization inside), wall time over 3000 calls
(timing.host_us_per_call), device time per eager call from CUDA events, and the kernel's time in
CUDA-graph replay.

    PYTHONPATH=. python3 notes/experiments/tma_host_gpu.py
"""
import time

import torch
from triton.testing import do_bench_cudagraph

import tritonmm
from tritonmm import plan, timing

a = torch.randn(64, 64, device="cuda").bfloat16()
w = torch.randn(64, 64, device="cuda").bfloat16()
out = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
calls = {"torch.mm": lambda: torch.mm(a, w.T, out=out), "tritonmm.mm": lambda: tritonmm.mm(a, w.T, out=out)}
for path in ("pointer", "tma"):
    plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = (0, 0) if path == "tma" else (2 ** 31, 0.5)
    plan._compiled.clear()
    calls["tritonmm.mm"]()
    assert plan.chosen(a, w.T, "native")[1] == path
    for name, fn in calls.items():
        for _ in range(3):
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(300):
                fn()
            submit = (time.perf_counter() - start) / 300 * 1e6
            torch.cuda.synchronize()
        wall = timing.host_us_per_call(fn)
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(3000):
            fn()
        end.record()
        torch.cuda.synchronize()
        device_eager = begin.elapsed_time(end) / 3000 * 1e3
        graph = do_bench_cudagraph(fn, rep=100) * 1e3
        print(f"{path:8s} {name:12s} submit {submit:5.1f} us  wall {wall:5.1f} us  device (eager) {device_eager:5.1f} us"
              f"  graph {graph:4.1f} us", flush=True)
