"""tf32x3 on split operands (session 5, after tf32x3_promote.py): the shipped kernel sums each K
step's three products from zero and adds them to the fp32 total in the same step, so every step
waits for its tensor-core products. "lag" adds the previous step's sum instead, leaving this
step's products in flight, at the cost of a third accumulator; "lag-first" writes the add before
the products. Speed and error at 4096^3 and 8192^3, pinned configs.

    PYTHONPATH=. python3 notes/experiments/tf32x3_lag.py
"""
import importlib.util
import inspect
import sys
import tempfile

import torch
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm
from tritonmm import config_space, plan
from tritonmm.kernels import gemm_tma

STEP = """                part = tl.dot(a_hi, b_desc.load([N + off_n, off_k]).T, part, input_precision="tf32")
                acc += tl.dot(a_hi, b_hi, part, input_precision="tf32")
"""
LAG = """                part = tl.dot(a_hi, b_desc.load([N + off_n, off_k]).T, part, input_precision="tf32")
                part = tl.dot(a_hi, b_hi, part, input_precision="tf32")
                acc += prev
                prev = part
            acc += prev
"""
LAG_FIRST = """                acc += prev
                part = tl.dot(a_hi, b_desc.load([N + off_n, off_k]).T, part, input_precision="tf32")
                prev = tl.dot(a_hi, b_hi, part, input_precision="tf32")
            acc += prev
"""
LOOP = "            for ki in range(k_tiles):\n                off_k = ki * BLOCK_K\n"
PREV = "            prev = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)\n" + LOOP


def variant(new_body, name):
    src = inspect.getsource(gemm_tma).replace("from .tiles import", "from tritonmm.kernels.tiles import")
    assert STEP in src and src.count(LOOP) == 2
    head, tail = src.split("if PRESPLIT:", 1)
    tail = tail.replace(LOOP, PREV, 1).replace(STEP, new_body)
    path = f"{tempfile.mkdtemp()}/{name}.py"
    open(path, "w").write(head + "if PRESPLIT:" + tail)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.gemm_tma_kernel


KERNELS = {"step": plan.gemm_tma_kernel, "lag": variant(LAG, "gemm_lag"), "lag-first": variant(LAG_FIRST, "gemm_lag1")}
CONFIGS = [(128, 128, 32, 3, 8), (128, 128, 32, 3, 8, 4), (128, 128, 32, 2, 8), (128, 64, 32, 4, 4)]
rows = []
for n in (4096, 8192):
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    ref = a.double() @ b.double()

    def err(c):
        return f"{((c.double() - ref).norm() / ref.norm()).item():.2e}"

    torch.backends.cuda.matmul.allow_tf32 = False
    sg = do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    rows.append([n, "SGEMM", "", f"{2 * n ** 3 / sg / 1e9:.1f}", "1.00", err(torch.mm(a, b))])
    for name, kernel in KERNELS.items():
        plan.gemm_tma_kernel = kernel
        for t in CONFIGS:
            cfg = config_space.make_config(*t)
            run = lambda: tritonmm.mm(a, b, input_precision="tf32x3", config=cfg)  # noqa: E731
            try:
                ms = do_bench(run, warmup=30, rep=300)
                rows.append([n, name, str(t), f"{2 * n ** 3 / ms / 1e9:.1f}", f"{sg / ms:.2f}", err(run())])
            except Exception as ex:  # noqa: BLE001
                rows.append([n, name, str(t), type(ex).__name__, "", str(ex)[:60]])
            print(*rows[-1], flush=True)
print(tabulate(rows, headers=["n", "kernel", "config", "TFLOP/s", "x SGEMM", "rel err"], disable_numparse=True))
