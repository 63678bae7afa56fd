"""The process Nsight Compute profiles for ``python -m bench --traffic`` (bench/ncu.py starts it).

    python -m bench.traffic_child SPEC.json

SPEC names one dtype, one shape and the implementations to run on it. Each is first run
outside any NVTX range (Triton compiles, cuda_reference loads, cuBLAS picks its kernel; ncu
profiles none of that), checked against float64, and then run once more inside the one range
ncu profiles, right after a tiny marker kernel: the kernels between two markers are that
implementation's, however many it launches. The manifest written to SPEC["manifest"] lists
the implementations in marker order, with the kernel path each actually took.
"""
import contextlib
import json
import sys

import torch
import triton
import triton.language as tl

import tritonmm
from tritonmm import thresholds
from tritonmm.precision import resolve_precision
from tritonmm.product import Product

from . import impls
from .common import rel_err
from .traffic import RANGE

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


@triton.jit
def traffic_marker(flag_ptr):  # its name is traffic.MARKER
    tl.store(flag_ptr, 1)


def kernel_path(path):
    """A context forcing tritonmm's kernel path as the tests do: "tma" lowers the TMA kernel's size bar to 0,
    "pointer" raises it past every product (the pointer kernel takes what is below it). None leaves the
    library's choice."""
    if path is None:
        return contextlib.nullcontext()
    return thresholds.override(tma_min_macs={"tma": 0, "pointer": float("inf")}[path], ieee_tma=path == "tma")


def runner(job: dict, dtype: str):
    """run(a, b, out) for one job: a pinned tritonmm config, or an implementation of bench.impls."""
    if job["kind"] == "tritonmm":
        precision = "ieee" if dtype == "fp32" else None
        return lambda a, b, out: tritonmm.matmul(a, b, out=out, config=job["config"], input_precision=precision)
    return next(i.run for i in impls.registry(dtype) if i.name == job["impl"])


def taken_path(job, a, b, out) -> str | None:
    """The kernel path tritonmm takes for these operands now ("tma" only on Hopper and for
    products whose tiles fill the GPU: rules.tma_path)."""
    if job["kind"] != "tritonmm":
        return None
    try:
        precision = resolve_precision(a.dtype, "ieee" if a.dtype == torch.float32 else None)
        return Product(a, b, out, precision).path
    except Exception as e:  # plan's internals moved: the measurement still stands, unlabelled
        return f"unknown ({type(e).__name__})"


def main(spec_path: str) -> int:
    with open(spec_path) as f:
        spec = json.load(f)
    dtype = DTYPES[spec["dtype"]]
    torch.backends.cuda.matmul.fp32_precision = "ieee"  # fp32 is IEEE fp32 throughout the bench
    M, N, K = spec["shape"]
    a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
    ref = a.double() @ b.double()
    out = torch.empty(M, N, dtype=dtype, device="cuda")
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    traffic_marker[(1,)](flag)
    ready, manifest = [], []
    for job in spec["jobs"]:
        entry = dict(job, asked_path=job.get("path"), path=None, rel_err=None, error=None)
        manifest.append(entry)
        out.fill_(float("nan"))
        try:
            run = runner(job, spec["dtype"])
            with kernel_path(job.get("path")):
                run(a, b, out)
                torch.cuda.synchronize()
                entry["path"] = taken_path(job, a, b, out)
            entry["rel_err"] = rel_err(out, ref)
        except Exception as e:  # one implementation failing is a finding, not the end of the run
            entry["error"] = f"{type(e).__name__}: {e}"[:300]
            continue
        ready.append((entry, run))
    # ncu saves and restores the memory a kernel may write around each replay: keep little allocated
    del ref
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    for order, (entry, run) in enumerate(ready):
        traffic_marker[(1,)](flag)
        with kernel_path(entry["asked_path"]):
            run(a, b, out)
        entry["marker"] = order
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    with open(spec["manifest"], "w") as f:
        json.dump(manifest, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
