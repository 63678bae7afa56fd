"""Experiment (session 26, run 1): where a staged unaligned product's time goes with PDL on, and what the copy and
the kernel could each give.

1023x1025x1027 bf16 runs 1.82x torch.mm in graph replay (session 25), short of the issue's 2x: about 17 us, of which
session 18 measured 5.8 in the operand copies (8.4 MB in one launch: 1.4 TB/s) and 9.9 in the kernel, against about
5.7 us for an aligned 1024^3. Hypotheses, each with its number here:
- the copy is latency-bound, not bandwidth-bound: a copy of the same bytes from an aligned source, and the copy
  kernel's other tiles and warp counts, run no faster than 4-5 us (then only fewer launches help);
- the kernel pays 2-4 us for storing C through 2-byte pointer stores (C's rows 2050 bytes apart): the same config
  into an aligned C (TMA store) shows it;
- the tuned config is the best on the staged operands (every candidate timed on aligned views of the buffers).

Per shape (bf16, operand copies rotated past the L2, graph replay, read-flushed, us per product). Run 1 took the
per-kernel split from torch.profiler over 20 replays; it now comes from bench.common.kernel_times (one replay).

    PYTHONPATH=. python3 notes/experiments/unaligned_parts.py [MxNxK:layout ...]
"""
import collections
import sys

import torch
from tabulate import tabulate

import tritonmm
from bench.common import config_text, device_ms, kernel_times
from bench.sweep import _graph
from tritonmm import plan, tuning
from tritonmm.kernels.copy import copy_kernel

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from cold_tuning import cold_setup, shapes  # noqa: E402

SHAPES = [(1023, 1025, 1027, "NN"), (2047, 2049, 2051, "NN")]
COPIES = [(64, 4), (32, 4), (32, 2), (128, 8), (64, 8), (128, 4)]  # (BLOCK, num_warps) of copy_kernel's pair launch


def per_kernel(graph, products: int) -> str:
    """Device us per product by kernel name (bench.common.kernel_times over one graph replay)."""
    per = collections.Counter()
    for name, us in kernel_times(graph.replay):
        per[name[:22]] += us / products
    return " ".join(f"{k}={v:.2f}" for k, v in per.most_common(4))


def pair_copy(x, y, x2, y2, block, warps):
    """copy_kernel's pair launch (as plan.copy makes it) with another tile and warp count, PDL off."""
    grid = (triton_cdiv(y.shape[0], block) * triton_cdiv(y.shape[1], block)
            + triton_cdiv(y2.shape[0], block) * triton_cdiv(y2.shape[1], block),)
    copy_kernel[grid](x, y, None, x2, y2, *x.shape, *y.shape, *x.stride(), *y.stride(), *x2.shape, *y2.shape,
                      *x2.stride(), *y2.stride(), BLOCK=block, SPLIT_TF32=False, PAIR=True, PAD=False, PDL=False,
                      num_warps=warps)


def triton_cdiv(a, b):
    return -(-a // b)


def main():
    table = []
    for M, N, K, layout in shapes(sys.argv[1:], SHAPES):
        sets, out, torch_g, tuned, path, _ = cold_setup(M, N, K, layout)
        n = len(sets)
        t = {"torch.mm": device_ms(torch_g.replay) / n}
        full = _graph(lambda a, b: tritonmm.matmul(a, b, out=out), sets)
        t["tritonmm"] = device_ms(full.replay) / n
        print(f"{M}x{N}x{K} {layout}: {n} copies, tuned {config_text(tuned)} ({path}); tritonmm kernels: "
              f"{per_kernel(full, n)}", flush=True)
        # The staged buffers, as plan._aligned_like makes them, and aligned sources of the same bytes.
        ya = [plan._aligned_like(a) for a, _ in sets]
        yb = [plan._aligned_like(b) for _, b in sets]
        xa = [plan._aligned_like(a).copy_(a) for a, _ in sets]
        xb = [plan._aligned_like(b).copy_(b) for _, b in sets]
        t["copy as shipped"] = device_ms(_graph(lambda i: plan.copy(sets[i][0], ya[i], pair=(sets[i][1], yb[i])),
                                                [(i,) for i in range(n)]).replay) / n
        for block, warps in COPIES:
            g = _graph(lambda i: pair_copy(sets[i][0], ya[i], sets[i][1], yb[i], block, warps),
                       [(i,) for i in range(n)])
            t[f"copy {block} w{warps}"] = device_ms(g.replay) / n
        g = _graph(lambda i: pair_copy(xa[i], ya[i], xb[i], yb[i], 64, 4), [(i,) for i in range(n)])
        t["copy 64 w4, aligned source"] = device_ms(g.replay) / n
        g = _graph(lambda i: (ya[i].copy_(sets[i][0]), yb[i].copy_(sets[i][1])), [(i,) for i in range(n)])
        t["torch copy_ x2"] = device_ms(g.replay) / n
        # The kernel alone on the staged buffers (already aligned: nothing staged), C unaligned and aligned.
        c_al = plan._aligned_empty(M, N, out)
        keep = []
        for name, c in (("kernel, C through pointers", out), ("kernel, C aligned (TMA store)", c_al)):
            products = [plan.Product(xa[i], xb[i], c, "native", captured=True) for i in range(n)]
            assert not products[0].staged and products[0].path == "tma", (products[0].staged, products[0].path)
            cands = products[0].candidates() if c is out else [tuned]
            for cfg in cands:
                try:
                    products[0].run(cfg)
                except tuning._UNRUNNABLE:
                    continue
                steps = [p.steps(cfg) for p in products]
                keep.append(steps)
                g = _graph(lambda i: [plan.launch_step(s) for s in steps[i]], [(i,) for i in range(n)])
                t[f"{name} {config_text(cfg)}{' (tuned)' if cfg == tuned else ''}"] = device_ms(g.replay) / n
        for k, v in t.items():
            print(f"    {k}: {v * 1e3:.2f} us", flush=True)
        table.append([f"{M}x{N}x{K}", f"{t['torch.mm'] * 1e3:.1f}", f"{t['tritonmm'] * 1e3:.2f}",
                      f"{t['torch.mm'] / t['tritonmm']:.2f}", f"{t['copy as shipped'] * 1e3:.2f}",
                      f"{min(v for k, v in t.items() if k.startswith('copy ')) * 1e3:.2f}",
                      f"{t['copy 64 w4, aligned source'] * 1e3:.2f}",
                      f"{min(v for k, v in t.items() if 'pointers' in k and 'tuned' in k) * 1e3:.2f}",
                      f"{min(v for k, v in t.items() if 'pointers' in k) * 1e3:.2f}",
                      f"{min(v for k, v in t.items() if 'TMA store' in k) * 1e3:.2f}"])
        del keep, sets, ya, yb, xa, xb
    print(tabulate(table, headers=["shape", "torch.mm", "tritonmm", "x", "copy", "best copy", "aligned-source copy",
                                   "kernel tuned", "best kernel", "kernel C aligned"], disable_numparse=True))


if __name__ == "__main__":
    main()
