"""Experiment (session 10): the pointer kernel's loads one step ahead (gemm_kernel's PREFETCH).

Compiled for sm_90 on the CPU machine, the pointer kernel pipelines its loads (cp.async into shared
memory, num_stages deep) only where Triton proves 16-element alignment: 16-bit operands with a row
stride, base or contiguous size not a multiple of 16 get one 2-byte load an element into registers,
outside the pipeline, so every K step waits out its loads (77x4099x2049: 31.5 us, 0.84x cuBLAS;
1023x1025x1027 eagerly). PREFETCH=1 issues each step's loads before the previous step's dot.
Timed per pinned config, PREFETCH 0 and 1, products launched from Products made outside capture
(the pointer path, as eager calls take it), in CUDA-graph replay, operands rotated past the L2;
torch.mm and the tuned tritonmm.mm (eager path) beside them. Hypothesis: 1.2x or more on the
unaligned shapes, nothing on the aligned control (whose PREFETCH rule says 0).

    PYTHONPATH=. python3 notes/experiments/prefetch.py

Ran at 8359280 (session 10, run 5), whose gemm_kernel took PREFETCH; reverted (notes/NOTES.md, Session 10).
"""
import math

import torch
from tabulate import tabulate
from triton.testing import do_bench

import tritonmm
from tritonmm import config_space, plan

L2 = torch.cuda.get_device_properties(0).L2_cache_size
CONFIGS = [(64, 64, 128, 4, 4), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4), (128, 128, 64, 3, 8), (64, 64, 64, 3, 4),
           (128, 128, 32, 3, 4), (64, 64, 128, 4, 4, 8, 2)]
rows = []
for M, N, K, layout in [(77, 4099, 2049, "NT"), (1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN"),
                        (256, 1000, 2048, "NN"), (333, 2048, 2048, "NN")]:
    n = max(2, min(8, math.ceil(3 * L2 / ((M * K + K * N + M * N) * 2))))
    As = [torch.randn(M, K, device="cuda").bfloat16() for _ in range(n)]
    Bs = [(torch.randn(N, K, device="cuda").bfloat16().T if layout == "NT" else torch.randn(K, N, device="cuda").bfloat16())
          for _ in range(n)]
    Cs = [torch.empty(M, N, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
    ref = As[0].double() @ Bs[0].double()

    def graph_us(call):
        for i in range(n):
            call(i)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(n):
                call(i)
        return do_bench(g.replay, warmup=20, rep=200) * 1e3 / n

    def err(c):
        return f"{((c.double() - ref).norm() / ref.norm()).item():.1e}"

    name = f"{M}x{N}x{K} {layout}"
    base = graph_us(lambda i: torch.mm(As[i], Bs[i], out=Cs[i]))
    launches = [plan.Product(a, b, c, "native") for a, b, c in zip(As, Bs, Cs)]
    rule = launches[0].constants.get("PREFETCH")
    rows.append([name, "torch.mm", f"{base:.1f}", "1.00", "", f"rule PREFETCH={rule}, path {launches[0].path}"])
    print(*rows[-1], flush=True)
    tritonmm.mm(As[0], Bs[0])  # tunes (eager path)
    cfg, path = plan.chosen(As[0], Bs[0], "native")
    us = graph_us(lambda i: launches[i].run(cfg))
    rows.append([name, f"tuned {path} {config_space.as_list(cfg)}", f"{us:.1f}", f"{base / us:.2f}", err(Cs[0]), ""])
    print(*rows[-1], flush=True)
    for t in CONFIGS:
        cfg = config_space.make_config(*t)
        for pf in (0, 1):
            for launch in launches:
                launch.constants["PREFETCH"] = pf
            Cs[0].fill_(float("nan"))
            try:
                launches[0].run(cfg)
                e = err(Cs[0])
                us = graph_us(lambda i: launches[i].run(cfg))
                rows.append([name, f"{t} PREFETCH={pf}", f"{us:.1f}", f"{base / us:.2f}", e, ""])
            except Exception as ex:  # noqa: BLE001
                rows.append([name, f"{t} PREFETCH={pf}", type(ex).__name__, "", "", str(ex)[:60]])
            print(*rows[-1], flush=True)
    del As, Bs, Cs, launches
print(tabulate(rows, headers=["shape", "impl", "graph us", "x cuBLAS", "rel err", "note"], disable_numparse=True))
