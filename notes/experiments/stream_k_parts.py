"""Experiment (session 13, run 2): where stream-K's time goes.

Run 1 (notes/experiments/stream_k.py) ran stream-K at 0.6-0.7x the TMA kernel's speed on the same tiles,
at 1024^3 (where A and B sit in L2) as at 4096^3. Here the kernel is launched directly in variants that each
drop one part, so the part that costs shows itself: "no wait" skips the spin on the earlier workers' flags
(the sum is then wrong; timing only), "no fixup" also skips adding their partial sums, "program id" takes
the worker's order from tl.program_id instead of the counter; "whole tiles" launches as many workers as
tiles (no part is shared). Run 2 timed single launches (host-bound below 4096^3); run 3 times CUDA-graph
replay of 20 launches (L2-warm, one operand set; the flags reset themselves), and with "ncu" as argument
launches each once for Nsight Compute. Registers and spills from the compiled kernel.

    git checkout beda4d2  # its tritonmm/kernels/stream_k.py; reverted after runs 1-3
    PYTHONPATH=. python3 notes/experiments/stream_k_parts.py [ncu]
"""
import importlib.util
import os
import sys
import tempfile

import torch
import triton
from tabulate import tabulate
from triton.tools.tensor_descriptor import TensorDescriptor

from tritonmm.kernels.gemm_tma import fit_descriptors, gemm_tma_kernel

SMS = torch.cuda.get_device_properties(0).multi_processor_count
SRC = open(os.path.join(os.path.dirname(__file__), "../../tritonmm/kernels/stream_k.py")).read() \
    .replace("from .gemm_tma", "from tritonmm.kernels.gemm_tma").replace("from .tiles", "from tritonmm.kernels.tiles")
WAIT = """                while tl.atomic_cas(flags_ptr + w, 1, 1, sem="acquire") != 1:
                    pass"""
ADD = """acc += tl.load(workspace_tile(ws_ptr, w, BLOCK_M, BLOCK_N), cache_modifier=".cg")"""
VARIANTS = {
    "as is": SRC,
    "no wait": SRC.replace(WAIT, ""),
    "no wait, no fixup": SRC.replace(WAIT, "").replace(ADD, "pass"),
    "program id": SRC.replace("worker = tl.atomic_add(flags_ptr + NUM_SMS, 1)", "worker = tl.program_id(0)"),
}
NCU = sys.argv[1:] == ["ncu"]


def load(tag, src):
    path = os.path.join(tempfile.mkdtemp(), f"sk_{len(tag)}_{abs(hash(tag))}.py")
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.stream_k_kernel


KERNELS = {tag: load(tag, src) for tag, src in VARIANTS.items()}
CONST = dict(A_TRANS=False, B_TRANS=False, BIAS="none", ACTIVATION="none", SCALE_A="none", SCALE_B="none",
             INPUT_PRECISION="tf32", UPCAST=False)


def graph_us(fn, n=20):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    return triton.testing.do_bench(g.replay, warmup=10, rep=60, return_mode="median") * 1e3 / n


rows = []
for M, N, K, (bm, bn, bk, st, w) in [(1536, 1536, 1536, (128, 128, 64, 5, 4)), (1536, 1536, 1536, (128, 256, 64, 3, 8)),
                                      (2176, 2176, 2176, (128, 256, 64, 3, 8)), (4096, 4096, 4096, (128, 256, 64, 4, 8))]:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    tile = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8)
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    descs = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (a, b, c)]
    fit_descriptors(dict(a_desc=descs[0], b_desc=descs[1], c_desc=descs[2], **tile, A_TRANS=False, B_TRANS=False))
    ws = torch.empty(max(SMS, tiles), bm, bn, device="cuda", dtype=torch.float32)
    flags = torch.zeros(max(SMS, tiles) + 1, device="cuda", dtype=torch.int32)
    ref = (a.float() @ b.float())
    launches = {"tma kernel": lambda: gemm_tma_kernel[(min(SMS, tiles),)](
        *descs, None, None, None, M, N, K, 0, 0, **tile, **CONST, NUM_SMS=SMS, PRESPLIT=False, num_warps=w,
        num_stages=st)}
    for tag, kernel in KERNELS.items():
        launches[tag] = (lambda kernel: lambda: kernel[(SMS,)](*descs, ws, flags, None, None, None, M, N, K, 0, 0, **tile,
                                                               **CONST, NUM_SMS=SMS, num_warps=w, num_stages=st))(kernel)
    launches["whole tiles"] = lambda: KERNELS["as is"][(tiles,)](*descs, ws, flags, None, None, None, M, N, K, 0, 0,
                                                                   **tile, **CONST, NUM_SMS=tiles, num_warps=w, num_stages=st)
    for tag, fn in launches.items():
        c.fill_(float("nan"))
        compiled = fn()
        torch.cuda.synchronize()
        err = ((c.float() - ref).norm() / ref.norm()).item()
        us = float("nan") if NCU else graph_us(fn)
        rows.append([f"{M}^3 {bm}x{bn} s{st}", tag, f"{us:.2f}", f"{2 * M * N * K / us * 1e-6:.0f}", compiled.n_regs,
                     compiled.n_spills, f"{err:.1e}", flags.tolist()[-1]])
        sys.stdout.flush()
print(tabulate(rows, headers=["shape", "kernel", "us", "TFLOP/s", "regs", "spills", "rel err", "counter"]))
