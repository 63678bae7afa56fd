"""Experiment (session 12, run 8): why aligned products on the pointer kernel ran 1.8-2.5x slower in run 6's
sweep after the alignment hints (512^3 11.4 us against 4.85 in session 11, same config 64x64x128 w4 s4).

The pointer kernel before the hints (git 0ad77a0~1: notes/experiments/gemm_before_hints.py) against the kernel
now, launched directly with the arguments Product builds (and its hints for the new one), same configs, graph
replay (timing.median_ms graph=True), operands fixed (L2-warm), 3 interleaved rounds. Run 8 had the hints on
every operand ("hints") and every hint at 1 ("hints at 1"); run 9 the kernel with hints only where Triton's
specialization does not say as much ("now").

Session 13 (run 4): OLD_KERNEL_FILE notes/experiments/gemm_hints_s12.py, session 12's hints as [VEC, 1] claims on
the broadcast terms, which Triton 3.6 compiled to 2-byte reads (session 12 review), against the hints on the 1-D
offset terms before they are broadcast; a kernel file whose gemm_kernel takes the hints gets them. The widest
cp.async of each compiled kernel is printed beside its time.

    PYTHONPATH=. python3 notes/experiments/hint_ab.py OLD_KERNEL_FILE
"""
import importlib.util
import re
import statistics
import sys

import torch
from tabulate import tabulate

from tritonmm import plan, timing
from bench.sweep import _operands

spec = importlib.util.spec_from_file_location("gemm_old", sys.argv[1])
old = importlib.util.module_from_spec(spec)
spec.loader.exec_module(old)

CASES = [(256, 256, 256, "NN", (64, 64, 128, 4, 4)), (512, 512, 512, "NN", (64, 64, 128, 4, 4)),
         (1024, 1024, 1024, "NN", (64, 64, 128, 4, 4)), (16, 4096, 4096, "NT", (64, 32, 256, 4, 4)),
         (64, 4096, 4096, "NT", (64, 32, 256, 4, 4)), (150, 5938, 3242, "NN", (64, 64, 128, 4, 4)),
         (150, 5938, 3242, "NN", (64, 128, 64, 6, 4)), (110, 2068, 1253, "NN", (64, 64, 128, 4, 4)),
         (110, 2068, 1253, "NT", (64, 64, 128, 4, 4)), (77, 4099, 2049, "NN", (64, 64, 128, 4, 4)),
         (1723, 1021, 1013, "NN", (128, 64, 64, 6, 4))]
OLD_HINTS = "VEC_A" in old.gemm_kernel.arg_names
HINTS = ("VEC_A", "VEC_B", "VEC_C", "DIV_M", "DIV_N", "DIV_K")

rows = []
for M, N, K, layout, (bm, bn, bk, st, w) in CASES:
    a, b = _operands(M, N, K, layout, torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    launch = plan.Product(a, b, c, "native")
    assert launch.path == "pointer"
    tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
    grid = launch.grid(tile)
    opts = dict(num_warps=w, num_stages=st)
    base = {k: v for k, v in launch.constants.items() if k not in HINTS}
    fns = {"old": lambda: old.gemm_kernel[grid](*launch.args, **(launch.constants if OLD_HINTS else base), **tile, **opts),
           "now": lambda: plan.gemm_kernel[grid](*launch.args, **launch.constants, **tile, **opts)}
    ref = a.double() @ b.double()
    widest = {}
    for name, fn in fns.items():
        c.fill_(float("nan"))
        sizes = re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^\]]*\], \[[^\]]*\], (0x[0-9a-f]+|\d+)", fn().asm["ptx"])
        widest[name] = max((int(x, 0) for x in sizes), default=0)
        err = ((c.double() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, (name, err)
    us = {n: [] for n in fns}
    for _ in range(3):
        for n, fn in fns.items():
            us[n].append(timing.median_ms(fn, graph=True) * 1e3)
    us = {n: statistics.median(v) for n, v in us.items()}
    rows.append([f"{M}x{N}x{K} {layout}", f"{bm}x{bn}x{bk} s{st} w{w}",
                 " ".join(f"{k[0]}{k[-1]}={launch.constants[k]}" for k in HINTS)]
                + [f"{us[n]:.2f} ({widest[n]} B)" for n in fns])
    print(rows[-1], flush=True)
print(tabulate(rows, headers=["shape", "config", "hints", *[f"{n} us (widest cp.async)" for n in fns]]))
