"""tf32x3 on split operands (session 5): speed and error against how often the tensor-core sum is
promoted into fp32 (plan.TF32X3_PROMOTE_K), with the chunk loop nested as written ("nested") or
marked flatten=True too ("flat"), the high part truncated (as shipped) or rounded ("round-split"),
and a "step" kernel summing each K step's three products from zero into the fp32 total (what
shipped), at 2048^3, 4096^3 and 8192^3 against SGEMM and TF32. Variants are written as module files
(Triton reads kernel sources) and swapped into plan. Written against the chunked kernel of session
5's runs 2-4 (never committed: its loop is NESTED below, with PROMOTE_K a kernel constant); at the
committed code the replacements no longer apply. Results: notes/NOTES.md, session 5.

    PYTHONPATH=. python3 notes/experiments/tf32x3_promote.py
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
from tritonmm.kernels import copy as copy_mod, gemm_tma


def variant(module, old, new, name):
    src = inspect.getsource(module).replace("from .tiles import", "from tritonmm.kernels.tiles import")
    assert old in src, old
    path = f"{tempfile.mkdtemp()}/{name}.py"
    open(path, "w").write(src.replace(old, new))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


flat = variant(gemm_tma, "for k0 in range(0, k_tiles, PROMOTE_K // BLOCK_K):",
               "for k0 in tl.range(0, k_tiles, PROMOTE_K // BLOCK_K, flatten=True):", "gemm_flat").gemm_tma_kernel
rounded = variant(copy_mod, "hi = (tile.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)",
                  "hi = tl.where(tl.abs(tile) < float('inf'), _tf32_round(tile), tile)", "copy_round").copy_kernel
NESTED = """            for k0 in range(0, k_tiles, PROMOTE_K // BLOCK_K):
                part = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
                for ki in range(k0, tl.minimum(k0 + PROMOTE_K // BLOCK_K, k_tiles)):"""
STEP = """            for ki in range(k_tiles):
                if True:
                    part = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)"""
step = variant(gemm_tma, NESTED, STEP, "gemm_step").gemm_tma_kernel  # promoted every K step, one loop
KERNELS = {"nested": plan.gemm_tma_kernel, "flat": flat, "step": step}
COPIES = {"trunc": plan.copy_kernel, "round": rounded}
CONFIGS = [(128, 128, 32, 3, 8), (128, 128, 32, 3, 8, 4), (128, 128, 32, 4, 8), (128, 128, 16, 5, 8)]
RUNS = [("step", "trunc", 0), ("nested", "trunc", 64), ("nested", "trunc", 128)]
rows = []
for n in (4096, 8192, 2048):
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    ref = a.double() @ b.double()

    def err(c):
        return f"{((c.double() - ref).norm() / ref.norm()).item():.2e}"

    torch.backends.cuda.matmul.allow_tf32 = False
    sg = do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    rows.append([n, "SGEMM", "", f"{2 * n ** 3 / sg / 1e9:.1f}", "1.00", err(torch.mm(a, b))])
    torch.backends.cuda.matmul.allow_tf32 = True
    tf = do_bench(lambda: torch.mm(a, b), warmup=50, rep=300)
    rows.append([n, "TF32", "", f"{2 * n ** 3 / tf / 1e9:.1f}", f"{sg / tf:.2f}", err(torch.mm(a, b))])
    torch.backends.cuda.matmul.allow_tf32 = False
    for kernel, split, promote in RUNS:
        plan.gemm_tma_kernel, plan.copy_kernel, plan.TF32X3_PROMOTE_K = KERNELS[kernel], COPIES[split], promote
        for t in CONFIGS:
            cfg = config_space.make_config(*t)
            run = lambda: tritonmm.mm(a, b, input_precision="tf32x3", config=cfg)  # noqa: E731
            label = f"{kernel} {split} promote {promote}"
            try:
                ms = do_bench(run, warmup=30, rep=300)
                rows.append([n, label, str(t), f"{2 * n ** 3 / ms / 1e9:.1f}", f"{sg / ms:.2f}", err(run())])
            except Exception as ex:  # noqa: BLE001
                rows.append([n, label, str(t), type(ex).__name__, "", str(ex)[:60]])
            print(*rows[-1], flush=True)
print(tabulate(rows, headers=["n", "impl", "config", "TFLOP/s", "x SGEMM", "rel err"], disable_numparse=True))
