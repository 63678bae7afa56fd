"""``python -m tritonmm.tune``: pre-tune shapes into the tuning cache, list it, clear it.

    python -m tritonmm.tune --shape 4096x4096x4096 --dtype bf16
    python -m tritonmm.tune --preset llm --dtype bf16 --layout NT
    python -m tritonmm.tune --list | --clear

Exits 0 when every shape asked for was tuned (or only --list / --clear was asked), 1 when any was not:
without a CUDA GPU nothing can be timed, and a shape none of whose configs compiles is not tuned; each
reason goes to stderr.
"""
import argparse
import sys

import torch

from . import cache, timing
from .tuning import tune

DTYPES = {"fp16": torch.float16, "float16": torch.float16, "bf16": torch.bfloat16,
          "bfloat16": torch.bfloat16, "fp32": torch.float32, "float32": torch.float32}
PRESETS = {
    "llm": [(m, n, k) for m in (16, 128, 1024, 8192) for n, k in ((4096, 4096), (4096, 14336), (14336, 4096))],
    "square": [(s, s, s) for s in (1024, 2048, 4096, 8192)],
}


def parse_shape(text: str):
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape must look like 4096x4096x4096 (MxNxK), got {text!r}")
    if min(m, n, k) < 1:
        raise argparse.ArgumentTypeError(f"every dimension must be at least 1, got {text!r}")
    return m, n, k


def operands(M, N, K, dtype, layout="NN", device="cuda"):
    """Random operands of one shape and layout ('N' row-major, 'T' a transposed view)."""
    a = torch.randn((K, M) if layout[0] == "T" else (M, K), device=device).to(dtype)
    b = torch.randn((N, K) if layout[1] == "T" else (K, N), device=device).to(dtype)
    a = a.T if layout[0] == "T" else a
    b = b.T if layout[1] == "T" else b
    return a, b


def _table(timings: dict, best, M, N, K) -> str:
    from tabulate import tabulate
    rows = []
    for cfg, ms in sorted(timings.items(), key=lambda kv: kv[1]):
        k = cfg.kwargs
        rows.append(["*" if cfg == best else "", k["BLOCK_M"], k["BLOCK_N"], k["BLOCK_K"], k["GROUP_M"],
                     k.get("SPLIT_K", 1), k.get("TAIL", 0), cfg.num_warps, cfg.num_stages, f"{ms:.4f}",
                     f"{timing.tflops(M, N, K, ms):.1f}"])
    return tabulate(rows, headers=["best", "BM", "BN", "BK", "GROUP_M", "SPLIT_K", "TAIL", "warps", "stages", "ms",
                                   "TFLOP/s"])


def main(argv=None) -> int:
    from tqdm import tqdm

    from . import device, native, planner
    from .precision import resolve_precision
    p = argparse.ArgumentParser(prog="python -m tritonmm.tune",
                                description="Tune tritonmm.matmul for given shapes and store the winners "
                                            f"in the tuning cache ({cache.cache_file()}).")
    p.add_argument("--shape", type=parse_shape, action="append", default=[], help="MxNxK (repeatable)")
    p.add_argument("--preset", choices=sorted(PRESETS), help="a named list of shapes")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16")
    p.add_argument("--precision", choices=["ieee", "tf32", "tf32x3"], help="float32 only (default: as torch.mm)")
    p.add_argument("--layout", choices=["NN", "NT", "TN", "TT"], default="NN",
                   help="N: row-major operand, T: a transposed view (NT is x @ W.T)")
    p.add_argument("--list", action="store_true", help="show what the cache holds")
    p.add_argument("--clear", action="store_true", help="empty the cache")
    args = p.parse_args(argv)

    if args.clear:
        print(f"cleared {cache.clear()} entries from {cache.cache_file()}")
    if args.list:
        from tabulate import tabulate
        rows = [[k, e["tile"], e["num_warps"], e["num_stages"], e.get("tflops")] for k, e in
                sorted(cache.entries().items())]
        print(f"{len(rows)} entries in {cache.cache_file()}")
        print(tabulate(rows, headers=["key", "tile", "warps", "stages", "TFLOP/s when tuned"]))
    shapes = args.shape + PRESETS.get(args.preset, [])
    if not shapes:
        if not (args.list or args.clear):
            p.error("give --shape, --preset, --list or --clear")
        return 0
    if not torch.cuda.is_available():
        print(f"tritonmm.tune: no CUDA GPU here, and tuning times kernels on one: none of the {len(shapes)} "
              f"shape(s) asked for was tuned.", file=sys.stderr)
        return 1
    dtype = DTYPES[args.dtype]
    precision = resolve_precision(dtype, args.precision)
    failed = []
    for M, N, K in tqdm(shapes, desc="shapes", disable=len(shapes) == 1):
        a, b = operands(M, N, K, dtype, args.layout)
        # The plan an eager call runs: where native.cpp repeats it, on its bars
        product = planner.eager_plan(a, b, torch.empty((M, N), dtype=dtype, device="cuda"), precision,
                                     native.serves(dtype))
        space = product.space()
        kept, dropped = product.prune(space)
        candidates = product.candidates()
        why = ", ".join(f"{n} for {reason}" for reason, n in dropped.items()) or "none"
        print(f"\n{M}x{N}x{K} {dtype} {precision} {args.layout} ({product.path} kernel): "
              f"{len(kept)} of {len(space)} configs kept; pruned {why}; "
              f"{len(candidates) - len(kept)} split-K variants")
        try:
            with tqdm(total=len(candidates), desc="configs", leave=False) as bar, device.on_device(a.device):
                best, timings = tune(product, progress=bar)
        except RuntimeError as e:  # no config of the space runs this product: the others may still tune
            failed.append(f"{M}x{N}x{K}: {e}")
            continue
        print(_table(timings, best, M, N, K))
    if len(failed) < len(shapes):
        print(f"\nwrote {cache.cache_file()}")
    if failed:
        print(f"tritonmm.tune: {len(failed)} of {len(shapes)} shape(s) not tuned:\n  " + "\n  ".join(failed),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
