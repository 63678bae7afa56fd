"""Experiment (session 21, run 1): when should an eager call stage operands it cannot read fast?

plan.STAGE_EAGER_MIN_MACS (2**34) keeps eager calls of unaligned products under 17 G multiply-adds on the
pointer kernel, reading the caller's operands 2 bytes at a time, because in session 4 a staged eager call cost
109-269 us of host time. Since then both staged copies go in one launch and a product seen before relaunches
its compiled kernels (fast_launch.py), so the host cost is a few launches. The sweep of session 20 shows what the
rule leaves behind: 1023x1025x1027 ran 17.4 us staged in graph replay but 0.83x torch.mm eagerly (pointer
kernel), 2047x2049x2051 59.7 us staged against 1.01x torch.mm eagerly.

Predicted: staged eager calls win wherever the pointer kernel's device time exceeds the staged call's host time
(~20-30 us): from about 2**29 multiply-adds up.

Per shape (bf16, eager back-to-back calls over operand copies rotated past the L2, wall time per call as the
sweep's eager column, 3 interleaved rounds): torch.mm; tritonmm under the shipped rule; tritonmm with
STAGE_EAGER_MIN_MACS = 0 (eager calls stage as graph-captured ones do). Each checked against float64.

    PYTHONPATH=. python3 notes/experiments/eager_staging.py [MxNxK:layout ...]
"""
import itertools
import os
import statistics
import sys
import tempfile

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import plan, timing
from bench.common import copies, rel_err, tritonmm_config
from bench.sweep import _eager_calls, _operands

SHAPES = [(1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN"), (77, 4099, 2049, "NT"), (1500, 1501, 1499, "NN"),
          (251, 2404, 1555, "NN"), (700, 1800, 2046, "NT"), (910, 1182, 350, "NN"), (513, 515, 517, "NN"),
          (2717, 98, 915, "NN"), (333, 138, 2569, "NT"), (1138, 916, 85, "NT"), (97, 70, 786, "NT"),
          (3000, 3001, 2999, "NN")]
if sys.argv[1:]:
    SHAPES = [(*map(int, a.split(":")[0].split("x")), a.split(":")[1]) for a in sys.argv[1:]]
SHIPPED = plan.STAGE_EAGER_MIN_MACS
os.environ["TRITONMM_CACHE_DIR"] = tempfile.mkdtemp()
ROUNDS = 3

table = []
for M, N, K, layout in SHAPES:
    sets = [_operands(M, N, K, layout, torch.bfloat16) for _ in range(copies((M * K + K * N) * 2))]
    outs = {name: torch.empty(M, N, dtype=torch.bfloat16, device="cuda") for name in ("torch", "rule", "staged")}

    def tm(name, bar):
        def call(a, b):
            plan.STAGE_EAGER_MIN_MACS = bar  # read at the call (launch_key holds it: each setting keyed apart)
            return tritonmm.matmul(a, b, out=outs[name])
        return call
    calls = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]), "rule": tm("rule", SHIPPED),
             "staged": tm("staged", 0)}
    ref = sets[0][0].double() @ sets[0][1].double()
    errs, configs = {}, {}
    for name, call in calls.items():
        errs[name] = rel_err(call(*sets[0]), ref)
        if name != "torch":
            configs[name] = tritonmm_config(*sets[0])[0]  # under the bar the call above set
    torch.cuda.synchronize()
    del ref

    def cycled(call):
        cycle = itertools.cycle(sets)
        return lambda: call(*next(cycle))
    n = _eager_calls(timing.median_ms(cycled(calls["torch"])))
    us = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            us[name].append(timing.host_us_per_call(cycled(call), calls=n))
    med = {name: statistics.median(t) for name, t in us.items()}
    row = [f"{M}x{N}x{K} {layout}", f"{M * N * K / 2 ** 20:.0f}", f"{med['torch']:.1f}",
           f"{med['rule']:.1f} ({configs['rule']})", f"{med['staged']:.1f} ({configs['staged']})",
           f"{med['torch'] / med['rule']:.2f} / {med['torch'] / med['staged']:.2f}",
           " ".join(f"{errs[k]:.1e}" for k in calls)]
    table.append(row)
    print(" | ".join(row), flush=True)
plan.STAGE_EAGER_MIN_MACS = SHIPPED
print(tabulate(table, headers=["shape", "M MACs", "torch us", "rule us (config)", "staged us (config)",
                               "x rule / staged", "err torch rule staged"]))
