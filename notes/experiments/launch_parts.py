"""Experiment (session 11): where an eager relaunch's host time goes, per kernel path.

The sweep's eager column (session 10, run 3) ran TMA products whose kernels take 16-30 us at 40-52 us a
call (128x4096x4096: 52 us eagerly, 20 us in graph replay; torch.mm 17-19 both ways), and the host suite
measured a 64^3 TMA call at 2.2x torch.mm's host time, the pointer kernel's at 1.4x. Question: which
pieces of a relaunched call cost what? Each piece is timed alone (wall clock over back-to-back calls,
GPU synchronized at both ends), from the whole public call down to Triton's launcher with prebuilt
arguments; then cProfile over the TMA relaunch, and the launcher's structure (which differs between
Triton versions) is printed.

    PYTHONPATH=. python3 notes/experiments/launch_parts.py
"""
import cProfile
import inspect
import pstats

import torch
import triton

import tritonmm
from tritonmm import fast_launch, plan, timing


def us(fn, n=3000):
    return timing.host_us_per_call(fn, n)


def launcher_structure(comp):
    """What Triton's launcher object is made of in this version (3.6 on the device)."""
    run = comp.run
    print(f"  CompiledKernel.run: {type(run).__module__}.{type(run).__qualname__}")
    for name, value in sorted(vars(run).items()) if hasattr(run, "__dict__") else ():
        print(f"    .{name}: {type(value).__qualname__} {getattr(value, '__qualname__', '')}")
    launch = getattr(run, "launch", None)
    if launch is not None and getattr(launch, "__closure__", None):
        cells = inspect.getclosurevars(launch).nonlocals
        print(f"    .launch closure: { {k: type(v).__qualname__ for k, v in cells.items()} }")
    return launch


def parts(M, N, K, path):
    a = torch.randn(M, K, device="cuda").bfloat16()
    w = torch.randn(N, K, device="cuda").bfloat16()
    b = w.T
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    saved = plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM
    plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = ((0, 0) if path == "tma" else (2 ** 62, saved[1]))
    try:
        plan._compiled.clear()
        tritonmm.mm(a, b, out=out)
        cfg, chosen = plan.chosen(a, b, "native")
        assert chosen == path, chosen
        known = plan._compiled[plan.launch_key(a, b, out, None, "none", "native")]
        comp = known.launches[0]
        stream = fast_launch.current_stream(0)
        tensors = (a, b, out, None, None, None)
        args = tensors
        if comp.descriptors is not None:
            args = (*(fast_launch._rebase(d, t) for d, t in zip(comp.descriptors, tensors)), *tensors[3:])
        full = args + comp.rest
        rows = {
            "torch.mm(a, b, out=)": lambda: torch.mm(a, b, out=out),
            "tritonmm.mm(a, b, out=)": lambda: tritonmm.mm(a, b, out=out),
            "tritonmm.mm(a, b)": lambda: tritonmm.mm(a, b),
            "plan.relaunch": lambda: plan.relaunch(a, b, out, None, "none", None, True),
            "plan._relaunch(entry)": lambda: plan._relaunch(known, a, b, out, None),
            "fast_launch.Compiled(...)": lambda: comp(tensors, stream),
            "CompiledKernel.run(prebuilt args)": lambda: comp.run(*comp.grid, stream, comp.function, comp.metadata,
                                                                  None, None, None, *full),
            "F.linear(a, w)": lambda: torch.nn.functional.linear(a, w),
            "tritonmm.linear(a, w)": lambda: tritonmm.linear(a, w),
            "torch.matmul(a, b)": lambda: torch.matmul(a, b),
            "tritonmm.matmul(a, b)": lambda: tritonmm.matmul(a, b),
            "w.T": lambda: w.T,
            "plan.launch_key": lambda: plan.launch_key(a, b, out, None, "none", "native"),
            "torch.cuda.is_current_stream_capturing": torch.cuda.is_current_stream_capturing,
            "torch.empty(M, N)": lambda: torch.empty(M, N, device="cuda", dtype=torch.bfloat16),
            "fast_launch.current_stream": lambda: fast_launch.current_stream(0),
            "torch.cuda.current_device": torch.cuda.current_device,
            "a.device": lambda: a.device,
        }
        if comp.descriptors is not None:
            rows["_rebase x3"] = lambda: [fast_launch._rebase(d, t) for d, t in zip(comp.descriptors, tensors)]
        times = {name: us(fn) for name, fn in rows.items()}
        print(f"== {M}x{N}x{K} {path} ({cfg}), us a call; direct C launch: {getattr(comp, 'direct', None) is not None}")
        for name, t in times.items():
            print(f"  {name:42s} {t:7.2f}")
        launch = launcher_structure(comp)
        if path == "tma":
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(3000):
                tritonmm.mm(a, b, out=out)
            prof.disable()
            torch.cuda.synchronize()
            pstats.Stats(prof).sort_stats("tottime").print_stats(22)
        return launch
    finally:
        plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = saved


print(f"torch {torch.__version__}, triton {triton.__version__}")
parts(64, 64, 64, "pointer")
parts(64, 64, 64, "tma")
parts(128, 4096, 4096, "tma")
