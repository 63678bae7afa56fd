"""Experiment (2026-11-22): the library's autotuned speed per dtype against torch.mm, with
the winning config and every config's time, before the bench CLI exists."""
import torch
from tabulate import tabulate

import tritonmm
from tritonmm import timing, tune, tuning
from tritonmm.matmul import Launch, resolve_precision


def main():
    rows = []
    for dtype, prec in ((torch.float16, None), (torch.bfloat16, None), (torch.float32, "ieee")):
        for n in (4096, 8192):
            if prec == "ieee" and n == 8192:
                continue
            a, b = tune.operands(n, n, n, dtype)
            c = torch.empty(n, n, device="cuda", dtype=dtype)
            precision = resolve_precision(dtype, prec)
            launch = Launch(a, b, c, precision)
            best, timings = tuning.tune(launch)
            for cfg, ms in sorted(timings.items(), key=lambda kv: kv[1]):
                print(n, dtype, cfg, f"{ms:.3f} ms {timing.tflops(n, n, n, ms):.0f} TF", flush=True)
            torch.backends.cuda.matmul.fp32_precision = "ieee" if prec == "ieee" else "tf32"
            t_ref = timing.median_ms(lambda: torch.mm(a, b, out=c))
            t_us = timing.median_ms(lambda: launch.run(best))
            ref = a.double() @ b.double()
            c.fill_(float("nan"))
            tritonmm.matmul(a, b, out=c, input_precision=prec)
            err = ((c.double() - ref).norm() / ref.norm()).item()
            rows.append([n, str(dtype), precision, launch.path, str(best.kwargs), best.num_warps, best.num_stages,
                         f"{timing.tflops(n, n, n, t_us):.0f}", f"{timing.tflops(n, n, n, t_ref):.0f}",
                         f"{t_ref / t_us:.3f}", f"{err:.1e}"])
    print(tabulate(rows, headers=["n", "dtype", "prec", "path", "tile", "w", "s", "tritonmm TF", "torch TF",
                                  "x torch", "err"]))


if __name__ == "__main__":
    main()
