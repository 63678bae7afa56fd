"""Experiment (session 24): the host cost of the small pieces an eager relaunch is made of, and of
alternatives to each, on the device's host (whose per-call costs run 2-4x the CPU machine's).

Run 1 (linear_host.py) timed tritonmm.linear at 64^3 at 17.5-22 us against F.linear's 13-15: new_empty
2.7-3.4 us, launch_key 2.5-3.4, w.T 1.0. Question: which spelling of each piece is cheapest?

    PYTHONPATH=. python3 notes/experiments/host_pieces.py
"""
import timeit

import torch

from tritonmm import fast_launch, plan


def ns(fn, n=20000):
    fn()
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e9


x = torch.randn(64, 64, device="cuda").bfloat16()
w = torch.randn(64, 64, device="cuda").bfloat16()
wt = w.T
shape, dev, dt = (64, 64), x.device, x.dtype
key = plan.launch_key(x, wt, None, None, "none", "native")
cache = {key: 1}
rows = {
    "x.new_empty(shape)": lambda: x.new_empty(shape),
    "x.new_empty((x.shape[0], w.shape[0]))": lambda: x.new_empty((x.shape[0], w.shape[0])),
    "plan._new_out(x, wt)": lambda: plan._new_out(x, wt),
    "torch.empty(shape, dtype=, device=dev)": lambda: torch.empty(shape, dtype=dt, device=dev),
    "torch.empty(shape, dtype=, device=0)": lambda: torch.empty(shape, dtype=dt, device=0),
    "torch.empty_like(x)": lambda: torch.empty_like(x),
    "x.new_empty_strided(shape, (64, 1))": lambda: x.new_empty_strided(shape, (64, 1)),
    "torch.empty_strided(shape, (64,1), ...)": lambda: torch.empty_strided(shape, (64, 1), dtype=dt, device=dev),
    "w.T": lambda: w.T,
    "w.t()": lambda: w.t(),
    "x.device": lambda: x.device,
    "x.get_device()": lambda: x.get_device(),
    "x.is_cuda": lambda: x.is_cuda,
    "x.dtype": lambda: x.dtype,
    "x.shape": lambda: x.shape,
    "x.stride()": lambda: x.stride(),
    "x.data_ptr()": lambda: x.data_ptr(),
    "x.dim()": lambda: x.dim(),
    "type(x)": lambda: type(x),
    "torch.cuda.is_current_stream_capturing()": torch.cuda.is_current_stream_capturing,
    "torch._C._cuda_isCurrentStreamCapturing()": torch._C._cuda_isCurrentStreamCapturing,
    "torch.cuda.current_device()": torch.cuda.current_device,
    "torch._C._cuda_getDevice()": torch._C._cuda_getDevice,
    "fast_launch.current_stream(0)": lambda: fast_launch.current_stream(0),
    "torch.is_grad_enabled()": torch.is_grad_enabled,
    "torch.compiler.is_compiling()": torch.compiler.is_compiling,
    "plan.launch_key(x, wt, ...)": lambda: plan.launch_key(x, wt, None, None, "none", "native"),
    "hash(key)": lambda: hash(key),
    "cache.get(key)": lambda: cache.get(key),
    "(x.shape[1], x.shape[0])": lambda: (x.shape[1], x.shape[0]),
    "x.stride()[::-1]": lambda: x.stride()[::-1],
}
print(f"torch {torch.__version__}; ns a call, best of 5 x 20000")
for name, fn in rows.items():
    print(f"  {name:44s} {ns(fn):8.0f}")
