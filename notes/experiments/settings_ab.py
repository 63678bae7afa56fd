"""Experiment harness (sessions 25-26): the planner's settings (plan.SETTINGS) against each other in graph replay.

Each variant assigns some of plan's settings while its graphs are captured (assigning one empties the launch caches,
so every variant plans afresh); the config is tuned once, under the first variant. Per shape (bf16, or DTYPE=float16;
the sweep's operands and copies, graph replay over copies rotated past the L2, read-flushed): torch.mm and each
variant, timed interleaved for ROUNDS rounds; each graph's result checked against float64 after a replay into NaN.

    VARIANTS="off:PDL=0;on:PDL=1" PYTHONPATH=. python3 notes/experiments/settings_ab.py [MxNxK:layout ...]

Session 26, run 2: copy_kernel's 32x32 tile where 64x64 tiles leave SMs few programs (COPY_MIN_PROGRAMS_PER_SM=8),
and a variant, since removed from the kernel, in which the copy let the next kernel's programs be placed as it
started (it lost 3-6% on seven of the ten staged products and gained 2-3% on two). Run 3 (the default VARIANTS):
the bar as shipped (6 programs an SM) against never.
"""
import os
import statistics
import sys

import torch
from tabulate import tabulate

import tritonmm
from bench.common import config_text, copies, device_ms, rel_err
from bench.sweep import _graph
from tritonmm import plan

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from cold_tuning import shapes  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", 3))
DTYPE = getattr(torch, os.environ.get("DTYPE", "bfloat16"))
VARIANTS = os.environ.get("VARIANTS", "64x64:COPY_MIN_PROGRAMS_PER_SM=0;shipped:")
SHAPES = [(1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN"), (3000, 3001, 2999, "NN"), (4095, 4097, 1531, "NN"),
          (77, 4099, 2049, "NT"), (512, 382, 1030, "NN"), (93, 529, 6074, "NT"), (700, 1800, 2046, "NT"),
          (1000, 1004, 1012, "NN"), (257, 515, 1031, "NN")]


def variants() -> dict:
    """{name: {setting: value}} from VARIANTS ("name:SETTING=value,SETTING=value;name2:...")."""
    out = {}
    for part in VARIANTS.split(";"):
        name, _, assigns = part.partition(":")
        out[name] = {}
        for assign in filter(None, assigns.split(",")):
            key, value = assign.split("=")
            assert key in plan.SETTINGS, f"{key} is not one of plan's settings"
            out[name][key] = type(getattr(plan, key))(float(value))
    return out


def operands(M, N, K, layout, n):
    a = [torch.randn(M, K, device="cuda").to(DTYPE) for _ in range(n)]
    b = [torch.randn(N, K, device="cuda").to(DTYPE).T if layout == "NT" else
         torch.randn(K, N, device="cuda").to(DTYPE) for _ in range(n)]
    return list(zip(a, b))


def main(default_shapes=SHAPES):
    table = []
    named = variants()
    defaults = {key: getattr(plan, key) for settings in named.values() for key in settings}
    for M, N, K, layout in shapes(sys.argv[1:], default_shapes):
        sets = operands(M, N, K, layout, copies((M * K + K * N) * 2))
        n = len(sets)
        outs = {name: torch.empty(M, N, dtype=DTYPE, device="cuda") for name in ("torch", *named)}
        graphs = {"torch": _graph(lambda a, b: torch.mm(a, b, out=outs["torch"]), sets)}
        cfg = path = None
        for name, settings in named.items():
            for key, value in settings.items():
                setattr(plan, key, value)
            try:
                if cfg is None:
                    tritonmm.matmul(*sets[0], out=outs[name])  # tunes the eager plan and its captured twin
                    cfg, path = plan.chosen(*sets[0], "native", captured=True)
                graphs[name] = _graph(lambda a, b: tritonmm.matmul(a, b, out=outs[name]), sets)
            except Exception as e:  # noqa: BLE001
                print(f"{M}x{N}x{K} {layout} {name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            for key, value in defaults.items():
                setattr(plan, key, value)
        ref = sets[-1][0].double() @ sets[-1][1].double()
        errs = {}
        for name, g in graphs.items():
            outs[name].fill_(float("nan"))
            g.replay()
            torch.cuda.synchronize()
            errs[name] = rel_err(outs[name], ref)
        times = {name: [] for name in graphs}
        for _ in range(ROUNDS):
            for name, g in graphs.items():
                times[name].append(device_ms(g.replay) * 1e3 / n)
        med = {name: statistics.median(t) for name, t in times.items()}
        base = med["torch"]
        row = [f"{M}x{N}x{K} {layout}", n, f"{path} {config_text(cfg)}", f"{base:.2f}"] + \
            [f"{med.get(v, float('nan')):.2f} ({base / med.get(v, float('nan')):.3f})" for v in named] + \
            [" ".join(f"{name} {e:.1e}" for name, e in errs.items())]
        table.append(row)
        print(" | ".join(map(str, row)), flush=True)
        print("    rounds: " + "; ".join(f"{name} " + " ".join(f"{t:.2f}" for t in ts) for name, ts in times.items()),
              flush=True)
        del graphs, sets
    print(tabulate(table, headers=["shape", "copies", "config", "torch us"] + [f"{v} us (x)" for v in named] +
                   ["rel err"], disable_numparse=True))


if __name__ == "__main__":
    main()
