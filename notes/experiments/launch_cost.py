"""Experiment (2026-11-22, session 2): where a small product's host time goes, and whether the
pointer kernel (no TMA descriptors to encode on the host each call) serves small products.

Part 1, 64^3 bf16 (GPU work negligible): per-call host time of torch.mm, tritonmm.matmul on
each path, Launch.run alone; a cProfile of tritonmm.matmul. Part 2, LLM shapes with small M: each path's autotuned time against torch.mm,
in interleaved rounds. A path is forced through matmul.TMA_MIN_MACS (0: TMA wherever the
operands allow it; infinity: pointers); "auto" is the library's default.
Run on the device: PYTHONPATH=. python3 notes/experiments/launch_cost.py
"""
import cProfile
import pstats
import statistics
import sys

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import timing
from tritonmm.timing import host_us_per_call
from tritonmm.tuning import choose_config

mm = sys.modules["tritonmm.matmul"]
DEFAULT_MIN_MACS = mm.TMA_MIN_MACS
PATHS = {"tma": 0, "pointer": float("inf"), "auto": DEFAULT_MIN_MACS}


def host_costs():
    rows = []
    a = torch.randn(64, 64, device="cuda").bfloat16()
    b = torch.randn(64, 64, device="cuda").bfloat16()
    out = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
    rows.append(["torch.mm", host_us_per_call(lambda: torch.mm(a, b, out=out))])
    for path in ("tma", "pointer"):
        mm.TMA_MIN_MACS = PATHS[path]
        launch = mm.Launch(a, b, out, "native")
        cfg = choose_config(launch)
        rows.append([f"tritonmm.matmul ({launch.path})", host_us_per_call(lambda: tritonmm.matmul(a, b, out=out))])
        rows.append([f"  Launch(...) ({launch.path})", host_us_per_call(lambda: mm.Launch(a, b, out, "native"))])
        rows.append([f"  choose_config ({launch.path})", host_us_per_call(lambda: choose_config(launch))])
        rows.append([f"  Launch.run ({launch.path})", host_us_per_call(lambda: launch.run(cfg))])
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(2000):
            tritonmm.matmul(a, b, out=out)
        prof.disable()
        torch.cuda.synchronize()
        print(f"--- cProfile, tritonmm.matmul on the {launch.path} path, 2000 calls (tottime, top 25)")
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    mm.TMA_MIN_MACS = DEFAULT_MIN_MACS
    rows.append(["checks only", host_us_per_call(lambda: mm.validation.check_matmul_args(a, b, out))])
    print(tabulate([[n, f"{us:.1f}"] for n, us in rows], headers=["64^3 bf16, per call", "us"]))


def small_m(rounds=3):
    rows = []
    cases = {}
    for M in (16, 128, 1024, 4096):
        for N, K in ((4096, 4096), (4096, 14336), (14336, 4096)):
            sets = [(torch.randn(M, K, device="cuda").bfloat16(), torch.randn(K, N, device="cuda").bfloat16())
                    for _ in range(4)]
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            ref = sets[0][0].double() @ sets[0][1].double()
            for name, min_macs in (("torch.mm", None), *PATHS.items()):
                if min_macs is not None:
                    mm.TMA_MIN_MACS = min_macs
                    tritonmm.matmul(*sets[0], out=out)  # tunes for this path
                    err = ((out.double() - ref).norm() / ref.norm()).item()
                    assert err < 1e-2, (M, N, K, name, err)

                def fn(min_macs=min_macs, sets=sets, out=out, i=[0]):
                    i[0] += 1
                    a, b = sets[i[0] % len(sets)]
                    if min_macs is None:
                        torch.mm(a, b, out=out)
                    else:
                        mm.TMA_MIN_MACS = min_macs
                        tritonmm.matmul(a, b, out=out)
                cases[(M, N, K, name)] = (fn, [])
    for _ in range(rounds):
        for fn, times in cases.values():
            times.append(timing.median_ms(fn))
    mm.TMA_MIN_MACS = DEFAULT_MIN_MACS
    for (M, N, K, name), (fn, times) in cases.items():
        ms = statistics.median(times)
        base = statistics.median(cases[(M, N, K, "torch.mm")][1])
        rows.append([f"{M}x{N}x{K}", name, f"{ms * 1e3:.1f}", f"{timing.tflops(M, N, K, ms):.0f}", f"{base / ms:.2f}"])
    print(tabulate(rows, headers=["shape", "impl", "us", "TFLOP/s", "x torch"]))


if __name__ == "__main__":
    print("torch", torch.__version__, "| triton", __import__("triton").__version__)
    host_costs()
    small_m()
