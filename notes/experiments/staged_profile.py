"""cProfile of eager calls of staged products, over back-to-back calls (bf16).

Session 4: 1023x1025x1027, one operand set, staged by the eager rule of then.
Session 21 (runs 2-3): staging forced on eager calls (plan.STAGE_EAGER_MIN_MACS = 0: 1023x1025x1027 sits under the
eager bar since), four operand copies rotated as the sweep does, a count of the calls that relaunched from the cache
(plan._relaunch), and 97x70x786 x @ W.T (the pointer kernel on K-padded copies) too. Run 2, before that session's
changes: Triton's ConstexprFunction triton.cdiv six times a call, copy() building its grid and arguments before its
cache lookup, torch.empty and a slice per staged buffer.

    PYTHONPATH=. python3 notes/experiments/staged_profile.py
"""
import cProfile
import io
import itertools
import os
import pstats
import tempfile

import torch

import tritonmm
from tritonmm import plan, timing
from bench.sweep import _operands

os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
plan.STAGE_EAGER_MIN_MACS = 0
for M, N, K, layout in [(1023, 1025, 1027, "NN"), (97, 70, 786, "NT")]:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(4)]
    out = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    tritonmm.matmul(*sets[0], out=out)
    hits = [0, 0]
    real = plan._relaunch

    def counting(*args, **kwargs):
        done = real(*args, **kwargs)
        hits[done is None] += 1
        return done
    plan._relaunch = counting
    cycle = itertools.cycle(sets)

    def call():
        return tritonmm.matmul(*next(cycle), out=out)
    print(M, N, K, "us/call", timing.host_us_per_call(call, calls=500), "relaunch hit/miss", hits,
          "entries", len(plan._compiled), "copy entries", len(plan._copy_launches))
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(300):
        call()
    torch.cuda.synchronize()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(14)
    print(text.getvalue()[:3500])
    plan._relaunch = real
