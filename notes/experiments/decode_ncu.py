"""Experiment (session 26, run 1): Nsight Compute on the decode products still below cuBLAS, ours against its kernel.

48-64 rows against a 5120^2 weight run 0.94x cuBLAS in graph replay (session 25): cuBLAS streams the 52 MB weight at
2.29 TB/s, our best config at 2.15, and our 64x128x128 on 40 programs at 2.03, so neither each SM's bytes nor the
number of programs looks like the bound. Here each kernel once under ncu (caches flushed before each, clocks left
alone), to compare DRAM bytes and throughput, L2 traffic, grid and occupancy: cuBLAS's kernel, the tuned config, and
pinned ones (64x64x128 s5 on 80 programs, 64x128x128 s4 on 40, 64x64x128 s3 on 80 with two programs an SM's room).

    ncu --profile-from-start off ... python3 notes/experiments/decode_ncu.py
"""
import torch

import tritonmm
from tritonmm import config_space, plan

SHAPES = [(48, 5120, 5120), (64, 5120, 5120)]
PINNED = [(64, 64, 128, 5, 4), (64, 128, 128, 4, 4), (64, 64, 128, 3, 4), (64, 32, 256, 4, 4)]


def main():
    runs = []
    for M, N, K in SHAPES:
        x = torch.randn(M, K, device="cuda").bfloat16()
        w = torch.randn(N, K, device="cuda").bfloat16()
        out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        tritonmm.matmul(x, w.T, out=out)  # tunes
        tuned, path = plan.chosen(x, w.T, "native", captured=True)
        product = plan.Product(x, w.T, out, "native", captured=True)
        cfgs = [tuned] + [config_space.make_config(*p) for p in PINNED]
        for cfg in cfgs:
            product.run(cfg)
        torch.mm(x, w.T, out=out)
        torch.cuda.synchronize()
        print(f"{M}x{N}x{K}: tuned {cfg_text(tuned)} ({path}); then", ", ".join(cfg_text(c) for c in cfgs[1:]),
              flush=True)
        runs.append((x, w, out, product, cfgs))
    torch.cuda.cudart().cudaProfilerStart()
    for x, w, out, product, cfgs in runs:
        torch.mm(x, w.T, out=out)
        for cfg in cfgs:
            product.run(cfg)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def cfg_text(cfg):
    k = cfg.kwargs
    return f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']} s{cfg.num_stages} split {k.get('SPLIT_K', 1)}"


if __name__ == "__main__":
    main()
