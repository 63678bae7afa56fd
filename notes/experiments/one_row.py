"""Experiment (session 9, run 2): the one-row kernel in the library (kernels/gemv.py), and thin
tensor-core tiles for 16 and 64 rows.

Run 1 (gemv_stream.py) streamed M = 1 weights at 82-86% of the read bandwidth with a standalone
GEMV. Here, through tritonmm.mm with a fresh tuning cache: the tuned call (the one-row configs now
among the candidates), each one-row config pinned, for x @ W.T (B contiguous along K) and x @ W
(along N, configs not measured before), in CUDA-graph replay with weights rotated past the L2,
against cuBLAS and a plain Triton read of the same bytes. Then M = 16 and 64 under thin pointer
tiles with shallow pipelines (many programs an SM, as the one-row kernel keeps its loads in flight):
hypothesis, they pass the tuned 64x32x256 and 64x64x128 tiles there (0.95-0.98x cuBLAS, ~77-79%).

    PYTHONPATH=. python3 notes/experiments/one_row.py
"""
import math

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm
from tritonmm import config_space, plan


@triton.jit
def read_kernel(w_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(w_ptr + offs, mask=offs < numel).to(tl.float32)))


L2 = torch.cuda.get_device_properties(0).L2_cache_size
big = torch.randn(1 << 28, device="cuda")
read_tbps = big.numel() * 4 / do_bench(lambda: big.sum(), warmup=20, rep=200) / 1e9
del big
print(f"read bandwidth (torch sum of 1 GiB): {read_tbps:.2f} TB/s", flush=True)

CASES = [(1, 4096, 14336, "NT"), (1, 14336, 4096, "NT"), (1, 4096, 4096, "NT"),
         (1, 4096, 14336, "NN"), (1, 14336, 4096, "NN"), (1, 4096, 4096, "NN"),
         (16, 14336, 4096, "NT"), (16, 4096, 4096, "NT"), (64, 4096, 4096, "NT"), (64, 14336, 4096, "NT")]
# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps) pinned: the one-row kernel's configs as run 2 had
# them (4 for B along K, 3 for B along N, then each layout's first of the other's), thin pointer tiles
# for 16 and 64 rows.
ONE_ROW = {"NT": [(1, 8, 512, 1, 4), (1, 4, 1024, 3, 4), (1, 8, 1024, 1, 8), (1, 2, 2048, 1, 4), (1, 128, 32, 1, 4)],
           "NN": [(1, 128, 32, 1, 4), (1, 64, 64, 1, 4), (1, 256, 16, 1, 4), (1, 8, 512, 1, 4)]}
THIN = {16: [(16, 16, 512, 2, 4), (16, 32, 256, 2, 4), (16, 16, 256, 3, 4), (16, 32, 512, 1, 4), (64, 32, 256, 4, 4)],
        64: [(64, 16, 256, 2, 4), (64, 16, 512, 2, 4), (64, 32, 256, 2, 4), (64, 32, 256, 4, 4), (64, 64, 128, 4, 4)]}
rows = []
for M, N, K, layout in CASES:
    w_bytes = N * K * 2
    n = max(2, math.ceil(2 * L2 / w_bytes))
    # NT: the weight is (N, K), B = W.T; NN: the weight is (K, N), B = W.
    ws = [torch.randn(*((N, K) if layout == "NT" else (K, N)), device="cuda").bfloat16() for _ in range(n)]
    bs = [w.T if layout == "NT" else w for w in ws]
    x = torch.randn(M, K, device="cuda").bfloat16()
    ref = x.double() @ bs[0].double()

    def graph_us(call):
        call(bs[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for b in bs:
                call(b)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for b in bs:
                call(b)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    def row(name, us, base, err=""):
        rows.append([f"{M}x{N}x{K} {layout}", name, f"{us:.1f}", f"{base / us:.2f}",
                     f"{w_bytes / us / 1e6 / read_tbps:.0%}", err])
        print(*rows[-1], flush=True)

    def err_of(out):
        return f"{((out.double() - ref).norm() / ref.norm()).item():.1e}"

    base = graph_us(lambda b: torch.mm(x, b))
    row("torch.mm", base, base)
    part = torch.empty(triton.cdiv(N * K, 8192), device="cuda")
    # A transposed view's data_ptr is its storage's: the kernel reads the weight's N * K elements flat.
    row("read (triton sum)", graph_us(lambda b: read_kernel[(part.numel(),)](b, part, N * K, BLOCK=8192)), base)
    tritonmm.mm(x, bs[0])  # tunes
    cfg, path = plan.chosen(x, bs[0], "native")
    row(f"tritonmm.mm tuned ({'one-row' if config_space.is_gemv(cfg) else path} "
        f"{cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}x{cfg.kwargs['BLOCK_K']} s{cfg.num_stages} w{cfg.num_warps})",
        graph_us(lambda b: tritonmm.mm(x, b)), base, err_of(tritonmm.mm(x, bs[0])))
    pinned = [config_space.make_config(*t) for t in (ONE_ROW[layout] if M == 1 else THIN[M])]
    for cfg in pinned:
        name = f"{cfg.kwargs['BLOCK_M']}x{cfg.kwargs['BLOCK_N']}x{cfg.kwargs['BLOCK_K']} s{cfg.num_stages} w{cfg.num_warps}"
        try:
            err = err_of(tritonmm.mm(x, bs[0], config=cfg))
            row(name, graph_us(lambda b: tritonmm.mm(x, b, config=cfg)), base, err)
        except Exception as e:  # noqa: BLE001
            rows.append([f"{M}x{N}x{K} {layout}", name, type(e).__name__, "", "", str(e)[:60]])
            print(*rows[-1], flush=True)
    del ws, bs
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "% read BW", "rel err"], disable_numparse=True))
