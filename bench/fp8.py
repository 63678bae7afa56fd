"""FP8 products with scales, tritonmm.scaled_mm against torch._scaled_mm: the
operands and one shape's measurement, shared by ``python -m bench --dtype fp8``, the sweep's
fp8 rows (``python -m bench --preset sweep --dtype fp8``) and ``python -m bench.suites fp8``.

The operands are what torch._scaled_mm takes: e4m3 a (M, K) row-major and b = W.T of an
(N, K) row-major weight W (so b is column-major), both made by tritonmm.quantize_fp8 from
standard normal floats, with tensor-wise scales (shape ()) or row-wise ones (a per row of a,
(M, 1), and one per column of b, (1, N)); the output is bf16. Errors are against a float64
product of the dequantized operands.

torch._scaled_mm runs cuBLASLt, but on sm90 row-wise scales may take CUTLASS kernels that torch
ships: its rows are labelled by the function, not by a library.
"""
import itertools
import statistics

import torch

import tritonmm
from tritonmm import timing

from .common import REF_MAX_MACS, copies, interleaved_times, rel_err, tritonmm_config

SCALES = ("tensor", "row")  # scale kinds: one scale per operand, or one per row of a and per column of b
TORCH, TRITONMM = "torch._scaled_mm", "tritonmm.scaled_mm"
OUT_DTYPE = torch.bfloat16


def has_fp8() -> bool:
    """Whether this process's GPU has FP8 tensor cores (compute capability 8.9+), which fp8 needs."""
    return torch.cuda.get_device_capability() >= (8, 9)


def torch_refuses(M: int, N: int, K: int) -> str | None:
    """Why torch._scaled_mm refuses an (M, K) @ (K, N) product with b column-major, or None when it
    takes it. Its checks (aten's _scaled_mm_out_cuda): the trailing dimension of a (K) and both
    dimensions of b (K and N) divisible by 16; M is free."""
    bad = [f"{name}={v}" for name, v in (("N", N), ("K", K)) if v % 16]
    return f"torch._scaled_mm refuses: {' and '.join(bad)} not a multiple of 16" if bad else None


def operands(M: int, N: int, K: int, scales: str, device="cuda") -> tuple:
    """(a, b, scale_a, scale_b): e4m3 a (M, K) and b = W.T (column-major) from quantize_fp8, with
    scales of the kind named (SCALES)."""
    dim = None if scales == "tensor" else 1
    (qa, sa), (qw, sw) = (tritonmm.quantize_fp8(torch.randn(M, K, device=device), dim=dim),
                          tritonmm.quantize_fp8(torch.randn(N, K, device=device), dim=dim))
    return qa, qw.T, sa, sw.reshape(()) if scales == "tensor" else sw.T


def operand_sets(M: int, N: int, K: int, scales: str) -> list:
    """Enough independent operand tuples that one pass over them exceeds twice the L2 (up to 8)."""
    return [operands(M, N, K, scales) for _ in range(copies(M * K + N * K))]


def calls(M: int, N: int, K: int) -> dict:
    """{name: call(a, b, scale_a, scale_b)}: tritonmm.scaled_mm, and torch._scaled_mm where it takes the shape."""
    fns = {} if torch_refuses(M, N, K) else {TORCH: lambda *ops: torch._scaled_mm(*ops, out_dtype=OUT_DTYPE)}
    fns[TRITONMM] = lambda *ops: tritonmm.scaled_mm(*ops, out_dtype=OUT_DTYPE)
    return fns


def checked(fns: dict, ops: tuple) -> tuple:
    """(fns, note): fns without torch._scaled_mm where it raises on ops after all (a rule torch_refuses
    does not know: its row is then reported empty instead of ending the run), and why, else None.
    torch's checks raise RuntimeError or ValueError; the synchronize makes an error of the
    launch itself surface here rather than in the timing."""
    if TORCH not in fns:
        return fns, None
    try:
        fns[TORCH](*ops)
        if torch.cuda.is_available():  # the tests check this logic on the CPU with stand-in calls
            torch.cuda.synchronize()
    except (RuntimeError, ValueError) as e:
        return {n: f for n, f in fns.items() if n != TORCH}, f"torch._scaled_mm raised: {str(e).splitlines()[0]}"
    return fns, None


def reference(a, b, scale_a, scale_b) -> torch.Tensor:
    """The float64 product of the dequantized operands."""
    return (a.double() * scale_a.double()) @ (b.double() * scale_b.double())


def rel_errors(fns: dict, ops: tuple) -> dict:
    """{name: relative (Frobenius) error of fns[name](*ops) against reference(*ops)}."""
    ref = reference(*ops)
    return {name: rel_err(fn(*ops), ref) for name, fn in fns.items()}


def measure_shape(M: int, N: int, K: int, scales: str, rounds: int, names=None) -> dict:
    """One shape and scale kind: every implementation (of names, if given) timed once per round, in
    turn, with device-time medians (common.device_ms) inside a round and the operands rotated past the L2. Returns
    dict(shape, M, N, K, scales, ms={name: median round}, spread_pct={name: (max - min) / median or
    None for one round}, rel_err={name: error or None above REF_MAX_MACS}, config (tritonmm's, as
    text) and tile (its (BLOCK_M, BLOCK_N)), both None without a tritonmm row, note (why
    torch._scaled_mm has no numbers, or None))."""
    sets = operand_sets(M, N, K, scales)
    fns, raised = checked({name: fn for name, fn in calls(M, N, K).items() if names is None or name in names}, sets[0])
    errs = rel_errors(fns, sets[0]) if M * N * K <= REF_MAX_MACS else {}
    times = interleaved_times({name: _rotating(fn, sets) for name, fn in fns.items()}, rounds)
    ms = {name: statistics.median(t) for name, t in times.items()}
    config, tile = tritonmm_config(*sets[0], out_dtype=OUT_DTYPE) if TRITONMM in fns else (None, None)
    return dict(shape=f"{M}x{N}x{K}", M=M, N=N, K=K, scales=scales, ms=ms,
                spread_pct={name: 100 * (max(t) - min(t)) / ms[name] if rounds > 1 else None
                            for name, t in times.items()},
                rel_err={name: errs.get(name) for name in fns},
                config=config, tile=tile, note=torch_refuses(M, N, K) or raised)


def _rotating(fn, sets):
    """fn over the operand sets in turn, one set a call."""
    cycle = itertools.cycle(sets)
    return lambda: fn(*next(cycle))


def tflops(row: dict, name: str) -> float | None:
    ms = row["ms"].get(name)
    return None if ms is None else timing.tflops(row["M"], row["N"], row["K"], ms)
