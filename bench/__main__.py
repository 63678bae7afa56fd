"""python -m bench: thread-level CUDA tiling, Triton block programs and cuBLAS, side by side.

    python -m bench --quick                   # a few minutes on an H100
    python -m bench --preset llm --dtype bf16 --out results/
    python -m bench --shape 4096x4096x4096 --impl "torch.mm" --impl tritonmm
    python -m bench --dtype tf32x3 --shape 4096x4096x4096   # float32 in three TF32 products: vs SGEMM and TF32
    python -m bench --dtype fp8 --preset llm --rounds 3      # scaled_mm vs torch._scaled_mm (bench/fp8.py)
    python -m bench --preset sweep --rounds 3 --out results/sweep/   # bench/sweep.py's shapes
    python -m bench --preset sweep --dtype fp8 --out results/sweep_fp8/   # the sweep in FP8, vs torch._scaled_mm
    python -m bench --preset sweep --draw 40 --seed 1 --rounds 3   # 40 shapes drawn at random, not the list's
    python -m bench --traffic --out results/traffic/    # bytes read, measured by Nsight Compute (bench/ncu.py)
    python -m bench --preset scaling --out results/traffic/   # the tiling write-ups' claims (bench/scaling.py)
"""
import argparse
import datetime
import itertools
import os
import platform
import statistics
import sys

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede the first import of triton

import triton  # noqa: E402

import tritonmm  # noqa: E402
from tritonmm import timing  # noqa: E402
from tritonmm.tune import parse_shape  # noqa: E402

from . import fp8, impls, ncu, report, scaling, sweep, traffic  # noqa: E402
from .common import copies, device_ms, rel_err  # noqa: E402

PRESETS = {
    "square": [(s, s, s) for s in (512, 1024, 2048, 4096, 8192)],
    "llm": [(m, n, k) for m in (16, 128, 1024, 8192) for n, k in ((4096, 4096), (4096, 14336), (14336, 4096))],
    "odd": [(1000, 1000, 1000), (1023, 1025, 1027), (4095, 4097, 1531), (77, 4099, 2049)],
}
QUICK = [(1024, 1024, 1024), (4096, 4096, 4096), (1023, 1025, 1027)]
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "tf32x3": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}


def copy_bandwidth_TBps() -> float:
    """Device-to-device copy of 1 GiB, counting bytes read plus bytes written."""
    src = torch.randn(2 ** 28, device="cuda")
    dst = torch.empty_like(src)
    ms = device_ms(lambda: dst.copy_(src))
    return 2 * src.numel() * 4 / (ms * 1e-3) / 1e12


def operand_sets(M, N, K, dtype):
    """Enough independent input pairs that rotating through them defeats the L2."""
    count = copies((M * K + K * N) * dtype.itemsize)
    return [(torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype))
            for _ in range(count)]


def fp8_label(name, scales) -> str:
    """An fp8 table row's implementation: bench/fp8.py's name and the scale kind."""
    return f"{name}, {scales}-wise"


def impl_names(precision) -> list:
    """The implementations of one table, by name: impls.registry's, or for fp8 bench/fp8.py's per scale kind."""
    if precision == "fp8":
        return [fp8_label(name, kind) for kind in fp8.SCALES for name in (fp8.TORCH, fp8.TRITONMM)]
    return [impl.name for impl in impls.registry(precision)]


def is_base(row) -> bool:
    """Whether row is its table's baseline, whose best TFLOP/s is the roofline's compute roof: torch.mm,
    or in fp8 torch._scaled_mm (either scale kind)."""
    return row["impl"] == "torch.mm" or row["impl"].startswith(fp8.TORCH)


def _row(precision, name, level, tile, M, N, K):
    return dict(precision=precision, impl=name, level=level, shape=f"{M}x{N}x{K}", M=M, N=N, K=K, tile=tile, ms=None,
                tflops=None, pct_torch=None, x_naive=None, model_bytes=None, intensity=None, rel_err=None, note=None,
                spread_pct=None)


def fp8_rows(m: dict, names=(fp8.TORCH, fp8.TRITONMM)) -> list:
    """Table rows of names (torch._scaled_mm, tritonmm.scaled_mm) from one fp8.measure_shape result: % torch is
    torch._scaled_mm's time over the row's, and the model bytes count FP8 reads and a bf16 write. A shape
    torch._scaled_mm refuses gets its row with the reason in place of a time. torch's tile column names
    the function: it runs cuBLASLt, or on sm90 with row-wise scales CUTLASS kernels torch ships."""
    M, N, K = m["M"], m["N"], m["K"]
    rows = []
    for name in names:
        level = "library" if name == fp8.TORCH else "block"
        row = _row("fp8", fp8_label(name, m["scales"]), level, fp8.TORCH if level == "library" else m["config"],
                   M, N, K)
        rows.append(row)
        if name not in m["ms"]:
            row["note"] = m["note"] or "not run"
            continue
        row.update(ms=m["ms"][name], tflops=fp8.tflops(m, name), rel_err=m["rel_err"].get(name),
                   spread_pct=m["spread_pct"].get(name))
        if fp8.TORCH in m["ms"]:
            row["pct_torch"] = 100 * m["ms"][fp8.TORCH] / row["ms"]
        if level == "block":
            row["model_bytes"] = traffic.modeled_bytes(M, N, K, 1, m["tile"], output=False) + 2 * M * N
            row["intensity"] = traffic.intensity(M, N, K, row["model_bytes"])
    return rows


def measure_fp8(shapes, only, progress, rounds=1):
    """The fp8 table: per shape and scale kind, bench/fp8.py's measurement (the one python -m bench.suites
    fp8 makes), as rows of this table; --impl selects among its four labels."""
    rows = []
    for (M, N, K), kind in itertools.product(shapes, fp8.SCALES):
        names = [n for n in (fp8.TORCH, fp8.TRITONMM) if not only or any(o in fp8_label(n, kind) for o in only)]
        progress.update(2)
        if names:
            rows += fp8_rows(fp8.measure_shape(M, N, K, kind, rounds, names), names)
    return rows


def measure(precision, shapes, only, progress, rounds=1):
    """One row per (shape, implementation). With rounds > 1 every implementation of a shape is
    timed once per round, in turn, and the row keeps the median round: the clock of a
    power-capped GPU drifts by several percent within a minute, and interleaving makes the
    drift hit every implementation alike instead of whichever ran last."""
    if precision == "fp8":
        return measure_fp8(shapes, only, progress, rounds)
    rows = []
    dtype = DTYPES[precision]
    torch.backends.cuda.matmul.fp32_precision = "tf32" if precision == "tf32" else "ieee"
    for M, N, K in shapes:
        sets = operand_sets(M, N, K, dtype)
        a, b = sets[0]
        ref = a.double() @ b.double()
        esize = a.element_size()
        shape_rows, timed = [], []
        for impl in impls.registry(precision):
            progress.update(1)
            if only and not any(o in impl.name for o in only):
                continue
            tile_name = "cuBLAS" if impl.tile is None else "x".join(map(str, impl.tile))
            row = _row(precision, impl.name, impl.level, tile_name, M, N, K)
            shape_rows.append(row)
            if impl.name in impls.SLOW and M * N * K > impls.SLOW_CAP:
                row["note"] = "skipped: > 4096^3 (slow)"
                continue
            out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
            impl.run(a, b, out)  # build, compile and tune here, outside the timing
            torch.cuda.synchronize()
            row["rel_err"] = rel_err(out, ref)
            tile = impl.tile
            if impl.name == "tritonmm (autotuned)":
                from tritonmm.plan import chosen, resolve_precision
                cfg, path = chosen(a, b, resolve_precision(dtype, impls.PRECISIONS.get(precision)))
                tile = (cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"])
                row["tile"] = f"{tile[0]}x{tile[1]}x{cfg.kwargs['BLOCK_K']} ({path})"
            row["model_bytes"] = traffic.modeled_bytes(M, N, K, esize, tile)
            row["intensity"] = traffic.intensity(M, N, K, row["model_bytes"])
            cycle = itertools.cycle(sets)
            timed.append((row, lambda impl=impl, cycle=cycle, out=out: impl.run(*next(cycle), out), []))
        for _ in range(rounds):
            for row, fn, times in timed:
                times.append(device_ms(fn))
        for row, fn, times in timed:
            row["ms"] = statistics.median(times)
            row["tflops"] = timing.tflops(M, N, K, row["ms"])
            if rounds > 1:
                row["spread_pct"] = 100 * (max(times) - min(times)) / row["ms"]
        base = {r["impl"]: r["ms"] for r in shape_rows if r["ms"]}
        for r in shape_rows:
            if r["ms"] and base.get("torch.mm"):
                r["pct_torch"] = 100 * base["torch.mm"] / r["ms"]
            if r["ms"] and base.get("cuda naive"):
                r["x_naive"] = base["cuda naive"] / r["ms"]
        rows += shape_rows
    return rows


def cpu_fallback() -> int:
    """No GPU: say so, check the Triton kernel in the interpreter, print the bytes model."""
    from tabulate import tabulate
    print("No CUDA GPU found: timing needs one. Running what works on the CPU instead: "
          "the Triton kernel in Triton's interpreter, and the modeled-traffic table.")
    M, N, K = 64, 48, 40
    a, b = torch.randn(M, K), torch.randn(K, N)
    err = rel_err(tritonmm.matmul(a, b), a.double() @ b.double())
    print(f"\ntritonmm.matmul in the interpreter, {M}x{N}x{K} float32: relative error {err:.1e} "
          f"against float64 ({'ok' if err < 1e-4 else 'WRONG'})")
    rows = []
    n = 4096
    for name, tile in [("naive (no reuse)", (1, 1)), ("tiled T=8", (8, 8)), ("tiled T=16", (16, 16)),
                       ("tiled T=32", (32, 32)), ("blocktile 64x64", (64, 64)), ("128x128", (128, 128)),
                       ("128x256", (128, 256))]:
        nbytes = traffic.modeled_bytes(n, n, n, 4, tile)
        rows.append([name, "x".join(map(str, tile)), f"{nbytes / 1e9:.2f}", f"{traffic.intensity(n, n, n, nbytes):.1f}"])
    print(f"\nModeled global traffic for {n}^3 float32 (each input once: "
          f"{traffic.minimum_bytes(n, n, n, 4) / 1e9:.2f} GB):")
    print(tabulate(rows, headers=["tiling", "tile", "GB moved", "FLOP/byte"]))
    return 0 if err < 1e-4 else 1


def run_meta(argv) -> dict:
    return dict(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
                python=platform.python_version(), date=datetime.date.today().isoformat(),
                command="python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]))


def _meta(argv) -> dict:
    """run_meta where there is a GPU to name; the runs that need one say so themselves."""
    return run_meta(argv) if torch.cuda.is_available() else {}


def run_sweep(args, argv) -> int:
    """bench/sweep.py's shapes for each dtype; the table, then one summary line per dtype."""
    from tqdm import tqdm
    dtypes = args.dtype or list(sweep.DTYPES)
    if "fp8" in dtypes and not fp8.has_fp8():
        if args.dtype:
            print(f"--dtype fp8 needs FP8 tensor cores (compute capability 8.9+): {torch.cuda.get_device_name()}",
                  file=sys.stderr)
            return 2
        print(f"fp8 left out: {torch.cuda.get_device_name()} has no FP8 tensor cores (compute capability 8.9+)")
        dtypes.remove("fp8")
    meta = dict(run_meta(argv), rounds=args.rounds)
    rows = []
    drawn = sweep.draw(args.draw, args.seed) if args.draw else None
    if drawn:
        meta["drawn"] = dict(count=args.draw, seed=args.seed)
    with tqdm(total=sum(len(sweep.shapes_for(dt, drawn)) for dt in dtypes), desc="sweep", file=sys.stderr) as progress:
        for dtype in dtypes:
            rows += sweep.measure(dtype, sweep.shapes_for(dtype, drawn), args.rounds, progress)
    summary = sweep.summarize(rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; "
          + (f"{args.draw} shapes drawn with seed {args.seed} (bench/sweep.py's draw); " if drawn else "")
          + "graph: device time (common.device_ms) of a CUDA graph replay over the operand copies, per product; "
          f"eager: wall time of back-to-back calls; medians of {args.rounds} interleaved round(s); "
          f"x = torch.mm time / tritonmm time" + ("" if "fp8" not in dtypes else
          f"; fp8: {sweep.FP8_NOTE}") + "\n")
    print(report.sweep_table(rows))
    print()
    print("\n".join(summary))
    if args.out:
        from pathlib import Path
        for path in report.write_sweep(rows, summary, meta, Path(args.out)):
            print("wrote", path)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a few shapes, a few minutes")
    p.add_argument("--preset", choices=sorted([*PRESETS, "sweep", "scaling"]), action="append",
                   help="shape preset (repeatable); 'sweep' runs on its own: tritonmm against torch.mm over "
                        "bench/sweep.py's shapes, fp16 and bf16, and fp8 against torch._scaled_mm, CUDA graph and "
                        "eager times; 'scaling' runs on its "
                        "own: the CUDA ladder and torch.mm over square fp32 sizes 1024-16384, and the tiling "
                        "write-ups' claims against them (reads --out's traffic.json for claim 1)")
    p.add_argument("--traffic", action="store_true",
                   help="runs on its own: bytes each kernel reads (L1, L2, DRAM), measured by Nsight Compute, beside "
                        "the tile model; --shape, --dtype (fp32, fp16, bf16) and --impl narrow it; raw ncu CSVs "
                        "go to OUT/ncu (a temporary directory without --out)")
    p.add_argument("--time-cap", type=float, default=scaling.CAP_S,
                   help="--preset scaling: skip an implementation at a size where a call would take longer than "
                        "this many seconds, extrapolated from the size before (default %(default)s)")
    p.add_argument("--draw", type=int, default=0, metavar="N",
                   help="--preset sweep: N shapes drawn at random by bench/sweep.py's draw (its kinds, none of its "
                        "shapes) instead of its list: the planner's rules checked where they were not tuned")
    p.add_argument("--seed", type=int, default=0, help="--draw's seed (default %(default)s)")
    p.add_argument("--shape", type=parse_shape, action="append", default=[], help="MxNxK (repeatable)")
    p.add_argument("--dtype", choices=sorted(DTYPES), action="append",
                   help="fp32 (IEEE), tf32, tf32x3 (float32 accuracy in three TF32 products, against SGEMM "
                        "and TF32), fp16, bf16, fp8 (tritonmm.scaled_mm against torch._scaled_mm: e4m3, tensor-wise "
                        "and row-wise scales, bf16 out; needs compute capability 8.9+) (repeatable; default all but "
                        "tf32x3 and fp8; the sweep: fp16, bf16 and fp8)")
    p.add_argument("--impl", action="append", help="run implementations whose name contains this (repeatable)")
    p.add_argument("--rounds", type=int, default=1,
                   help="time each implementation this many times, interleaved; report the median and spread "
                        "(3 recommended for the sweep)")
    p.add_argument("--out", help="write results.json, results.csv and PNG plots here "
                                 "(the sweep: sweep.json, sweep.csv and sweep.png)")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.draw and "sweep" not in (args.preset or []):
        p.error("--draw draws the sweep's shapes: use it with --preset sweep")
    if args.traffic:
        if args.preset or args.quick or args.rounds > 1:
            p.error("--traffic runs on its own: no --preset, --quick or --rounds")
        if not set(args.dtype or []) <= {"fp32", "fp16", "bf16"}:
            p.error("--traffic profiles fp32 (IEEE), fp16 and bf16")
        return ncu.run(args, _meta(argv))
    if "scaling" in (args.preset or []):
        if len(args.preset) > 1 or args.shape or args.impl or args.quick or args.dtype:
            p.error("--preset scaling runs on its own: no other preset, --shape, --impl, --dtype or --quick")
        return scaling.run(args, _meta(argv))
    if "sweep" in (args.preset or []):
        if len(args.preset) > 1 or args.shape or args.impl or args.quick:
            p.error("--preset sweep runs on its own: no other preset, --shape, --impl or --quick")
        if not set(args.dtype or []) <= set(sweep.DTYPES):
            p.error(f"--preset sweep runs {', '.join(list(sweep.DTYPES)[:-1])} and {list(sweep.DTYPES)[-1]} only")
        if args.draw and not 1 <= args.draw <= sweep.DRAW_MAX:
            p.error(f"--draw takes 1-{sweep.DRAW_MAX} shapes")
        if not torch.cuda.is_available():
            print("No CUDA GPU found: the sweep times GPU kernels. Nothing timed.")
            return 0
        return run_sweep(args, argv)
    if not torch.cuda.is_available():
        return cpu_fallback()
    if "fp8" in (args.dtype or []) and not fp8.has_fp8():
        p.error(f"--dtype fp8 needs FP8 tensor cores (compute capability 8.9+): {torch.cuda.get_device_name()}")

    from tqdm import tqdm
    shapes = list(args.shape)
    for preset in args.preset or []:
        shapes += PRESETS[preset]
    if not shapes:
        shapes = QUICK if args.quick else PRESETS["square"] + PRESETS["odd"]
    precisions = args.dtype or (["fp32", "tf32", "bf16"] if args.quick else ["fp32", "tf32", "fp16", "bf16"])
    meta = run_meta(argv)
    meta["copy_TBps"] = copy_bandwidth_TBps()
    total = sum(len(impl_names(pr)) for pr in precisions) * len(shapes)
    rows = []
    with tqdm(total=total, desc="benchmarks", file=sys.stderr) as progress:
        for precision in precisions:
            rows += measure(precision, shapes, args.impl, progress, args.rounds)
    meta["peaks_tflops"] = {pr: max((r["tflops"] for r in rows if r["precision"] == pr and is_base(r) and r["tflops"]),
                                    default=None) for pr in precisions}
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; "
          f"device copy {meta['copy_TBps']:.2f} TB/s; device-time medians (common.device_ms)"
          + (f", median of {args.rounds} interleaved rounds" if args.rounds > 1 else ""))
    for precision in precisions:
        print(f"\n## {precision}" + report.TITLES.get(precision, ""))
        print(report.table([r for r in rows if r["precision"] == precision]))
    if args.out:
        from pathlib import Path
        for path in report.write(rows, meta, Path(args.out)):
            print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
