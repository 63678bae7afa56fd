"""Experiment (session 19, run 3): Nsight Compute on tile_192.py's kernel at 4096^3 bf16, one launch per config:
128x256 (767 TFLOP/s in run 2), 128x128 on 4 warps (701) and 128x192 as 128x128 + 128x64 on 8 warps (441),
to see which unit the two-dot tile waits on. Run under ncu (notes/runs/s19_run3.sh).
"""
import torch

from tile_192 import launcher

M = N = K = 4096
a = torch.randn(M, K, device="cuda").bfloat16()
b = torch.randn(K, N, device="cuda").bfloat16()
c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
sms = torch.cuda.get_device_properties(0).multi_processor_count
for cfg in [(128, 0, 256, 0, 64, 4, 8), (128, 0, 128, 0, 64, 5, 4), (128, 0, 128, 64, 64, 4, 8)]:
    launcher(a, b, c, cfg, sms)()
torch.cuda.synchronize()
