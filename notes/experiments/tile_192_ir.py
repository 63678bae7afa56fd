"""Experiment (session 19, run 2): why tile_192.py's 128x192 tiles ran at 64% of 128x256's rate at 4096^3.

Compiles each config of tile_192.py's kernel at 4096^3 bf16 (A @ B, both row-major) with the installed Triton
and prints registers, spills, the wgmma waits the TTGIR holds (pendings) and TFLOP/s (do_bench, L2-warm: a
rate, not a comparison with cuBLAS). Triton 3.8 on the CPU machine compiles 128x128+64 with both dots async
and one wait of 2 pending groups a K step, 122 registers, no spills.

    PYTHONPATH=. python3 notes/experiments/tile_192_ir.py
"""
import re

import torch
import triton

from tile_192 import launcher

CONFIGS = [(128, 0, 256, 0, 64, 4, 8), (128, 0, 128, 0, 64, 5, 4), (128, 0, 128, 64, 64, 4, 8),
           (128, 0, 128, 64, 32, 6, 8), (128, 64, 128, 0, 64, 4, 8), (64, 0, 128, 64, 64, 4, 4),
           (128, 0, 128, 128, 64, 3, 8)]
M = N = K = 4096
a = torch.randn(M, K, device="cuda").bfloat16()
b = torch.randn(K, N, device="cuda").bfloat16()
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
print("triton", triton.__version__)
for cfg in CONFIGS:
    call = launcher(a, b, c, cfg, sms)
    k = call()
    ttgir = k.asm["ttgir"]
    ms = triton.testing.do_bench(call, warmup=25, rep=100, return_mode="median")
    err = ((c.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm()).item()
    print(cfg, f"regs {k.n_regs} spills {k.n_spills} shared {k.metadata.shared}",
          "dots", len(re.findall(r"warp_group_dot %", ttgir)), "async", len(re.findall("isAsync = true", ttgir)),
          "waits", re.findall(r"warp_group_dot_wait.*pendings = (\d+)", ttgir),
          f"{2 * M * N * K / ms / 1e9:.0f} TFLOP/s err {err:.1e}", flush=True)
    open(f"/tmp/ttgir_{'_'.join(map(str, cfg))}.mlir", "w").write(ttgir)
