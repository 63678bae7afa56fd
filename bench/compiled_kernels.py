"""Where a compiled model step spends its device time, aten against tritonmm, kernel by kernel:

    python -m bench.compiled_kernels                  # train and prefill
    python -m bench.compiled_kernels prefill

The bench's Llama-like model (bench/model_bench.py: Llama-3-8B widths, two layers, bf16), each step
compiled for aten, use_tritonmm and swap_linears as ``--preset model --compile`` compiles it, warmed up
(the first calls compile and tune), then one call profiled (bench.common.kernel_times). Prints per
variant the device time of GEMM kernels (cuBLAS's or tritonmm's: model_bench.kernel_kind) and of the
rest; then the GEMM launches side by side in launch order, which is the graph's order of products in
each variant; then the other kernels whose time differs most between aten and use_tritonmm (a fused
epilogue shows up there as the pointwise kernel it shrank). Device time only: host time and launch gaps
are the model bench's wall-clock rows.
"""
import collections
import sys

import torch

from . import model_bench
from .common import kernel_times

VARIANTS = ("aten", "use_tritonmm", "swap_linears")


def profile(step: str, variants: dict) -> dict:
    """{variant: [(kernel name, device us)]} of one call of each variant's compiled step."""
    model = variants["aten"][0]
    inputs = model_bench.make_inputs(step, model, model.head.out_features)
    torch._dynamo.reset()
    out = {}
    for name in VARIANTS:
        variant, context = variants[name]
        with context():
            fn = model_bench.compiled_step_fn(step, variant, inputs, f"{step}_{name}")
            for _ in range(model_bench.COMPILE_WARMUP):
                fn()
            out[name] = kernel_times(fn)
    torch._dynamo.reset()
    return out


def report(step: str, times: dict) -> str:
    lines = []
    for name, kernels in times.items():
        kinds = collections.Counter()
        for kernel, us in kernels:
            kinds[model_bench.kernel_kind(kernel) or "other"] += us
        lines.append(f"{step} {name}: {len(kernels)} kernels, {sum(kinds.values()) / 1e3:.2f} ms: "
                     + ", ".join(f"{kind} {us / 1e3:.2f} ms" for kind, us in kinds.items()))
    gemms = {name: [(k, us) for k, us in kernels if model_bench.kernel_kind(k)] for name, kernels in times.items()}
    lines.append(f"{step}: GEMM launches in order, us: " + " | ".join(times))
    for i in range(max(len(g) for g in gemms.values())):
        cells = [f"{g[i][1]:8.1f} {g[i][0][:36]:<36}" if i < len(g) else f"{'-':>8} {'':<36}" for g in gemms.values()]
        lines.append(f"{i:3d} " + " | ".join(cells))
    other = {name: collections.Counter() for name in times}
    for name, kernels in times.items():
        for kernel, us in kernels:
            if not model_bench.kernel_kind(kernel):
                other[name][kernel[:60]] += us
    names = set().union(*other.values())
    lines.append(f"{step}: other kernels, the largest aten / use_tritonmm differences, us: " + " | ".join(times))
    for kernel in sorted(names, key=lambda k: -abs(other["use_tritonmm"][k] - other["aten"][k]))[:12]:
        lines.append(" ".join(f"{other[name][kernel]:9.1f}" for name in times) + f"  {kernel}")
    return "\n".join(lines)


def main(argv: list) -> int:
    steps = argv or ["train", "prefill"]
    unknown = [s for s in steps if s not in model_bench.STEPS]
    if unknown:
        print(f"steps must be among {model_bench.STEPS}, got {unknown}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench.compiled_kernels profiles CUDA kernels: it needs a GPU", file=sys.stderr)
        return 3
    variants = model_bench.models(torch.bfloat16)
    for step in steps:
        print(report(step, profile(step, variants)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
