"""One data-parallel and one stream-K launch of 1536^3 bf16 under one config, for Nsight Compute
(session 6): where stream-K's time goes.

    ncu --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
        -k regex:gemm python3 notes/experiments/stream_k_profile.py
"""
import torch

import tritonmm
from tritonmm import plan
from tritonmm.tune import operands

plan.TMA_MIN_MACS = plan.FEW_TILES_PER_SM = 0
a, b = operands(1536, 1536, 1536, torch.bfloat16, "NN", "cuda")
base = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, num_warps=8, num_stages=3)
for cfg in (base, dict(base, STREAM_K=1)):
    tritonmm.mm(a, b, config=cfg)
torch.cuda.synchronize()
