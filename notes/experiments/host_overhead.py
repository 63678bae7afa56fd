"""Experiment (2026-11-22): host time per call for a tiny product, where the GPU work is
negligible, split into tritonmm's Python and Triton's own launch path."""
import sys

import torch

import tritonmm
from tritonmm.timing import host_us_per_call
from tritonmm.tuning import choose_config

mm = sys.modules["tritonmm.matmul"]


for dtype, prec in ((torch.bfloat16, None), (torch.float32, "tf32")):
    a = torch.randn(64, 64, device="cuda").to(dtype)
    b = torch.randn(64, 64, device="cuda").to(dtype)
    out = torch.empty(64, 64, device="cuda", dtype=dtype)
    precision = mm.resolve_precision(dtype, prec)
    launch = mm.Launch(a, b, out, precision)
    cfg = choose_config(launch)
    print(dtype, prec, "path", launch.path)
    print(f"  torch.mm                      {host_us_per_call(lambda: torch.mm(a, b, out=out)):7.1f} us")
    print(f"  tritonmm.matmul               {host_us_per_call(lambda: tritonmm.matmul(a, b, out=out, input_precision=prec)):7.1f} us")
    print(f"  Launch(...) only              {host_us_per_call(lambda: mm.Launch(a, b, out, precision)):7.1f} us")
    print(f"  launch.run(cfg), prebuilt     {host_us_per_call(lambda: launch.run(cfg)):7.1f} us")
    print(f"  checks only                   {host_us_per_call(lambda: mm.validation.check_matmul_args(a, b, out)):7.1f} us")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        tritonmm.matmul(a, b, out=out, input_precision=prec)
    print(f"  tritonmm in a CUDA graph      {host_us_per_call(graph.replay):7.1f} us")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.mm(a, b, out=out)
    print(f"  torch.mm in a CUDA graph      {host_us_per_call(graph.replay):7.1f} us")
