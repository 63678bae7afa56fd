"""Diagnostic (2026-11-22, session 3): in the first sweep, eager tritonmm calls took 64-104 us
from the second shape on, as if the direct relaunch (fast_launch.py) had switched itself off.
This replays the sweep's first shapes and reports, after each, whether it is on, and the
traceback of anything that switches it off.
Run on the device: PYTHONPATH=. python3 notes/experiments/fast_launch_check.py
"""
import traceback

import torch

from bench import sweep
from tritonmm import fast_launch, plan

real_disable = fast_launch.disable


def loud_disable():
    traceback.print_stack()
    real_disable()


fast_launch.disable = loud_disable
real_call = fast_launch.Compiled.__call__


def loud_call(self, tensors, stream):
    try:
        return real_call(self, tensors, stream)
    except Exception:
        traceback.print_exc()
        raise


fast_launch.Compiled.__call__ = loud_call
for M, N, K, layout in sweep.SHAPES[:4]:
    row = sweep._shape_row(torch.bfloat16, M, N, K, layout, 1)
    print(f"{row['shape']}: eager {row['tritonmm_eager_us']:.1f} us, fast_launch on: {fast_launch.enabled()}, "
          f"compiled entries {len(plan._compiled)}", flush=True)
