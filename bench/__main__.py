"""python -m bench: thread-level CUDA tiling, Triton block programs and cuBLAS, side by side.

    python -m bench --quick                   # meant for 90 s or less on an H100, caches cold
    python -m bench --preset llm --dtype bf16 --out results/
    python -m bench --shape 4096x4096x4096 --impl "torch.mm" --impl tritonmm
    python -m bench --dtype tf32x3 --shape 4096x4096x4096   # float32 in three TF32 products: vs SGEMM and TF32
    python -m bench --dtype fp8 --preset llm --rounds 3      # scaled_mm vs torch._scaled_mm (bench/fp8.py)
    python -m bench --preset sweep --rounds 3 --out results/sweep/   # bench/sweep.py's shapes
    python -m bench --preset sweep --dtype fp8 --out results/sweep_fp8/   # the sweep in FP8, vs torch._scaled_mm
    python -m bench --preset sweep --draw 40 --seed 1 --rounds 3   # 40 shapes drawn at random, not the list's
    python -m bench --preset first-call --draw 6 --seed 1   # a new shape's first call; untuned vs tuned configs
    python -m bench --preset model --rounds 3          # a Llama-like model: train, prefill, decode (bench/model_bench.py)
    python -m bench --preset model --rounds 3 --compile   # and compiled train, prefill (--compile all: decode)
    python -m bench --traffic --out results/traffic/    # bytes read, measured by Nsight Compute (bench/ncu.py)
    python -m bench --preset scaling --out results/traffic/   # the tiling write-ups' claims (bench/scaling.py)

Every run prints its tables and, with --out DIR, writes them to DIR (created if need be): the data
(JSON, CSV), plots, and DIR/RESULTS.md, a page of this one run (GPU, date, versions, command, then the
tables) that replaces any earlier one. Progress goes to stderr: a line per step and one per phase
with its seconds. tritonmm tunes each new shape (TRITONMM_AUTOTUNE=1) unless the environment sets
TRITONMM_AUTOTUNE, or --quick, which runs its untuned default configs (0). Without a GPU every run is the CPU smoke job (cpu_smoke) and names the options it
could not honour; it exits 0 where that job is what was asked (the product table), 3 where the
run asked for GPU timings only (a preset that runs on its own, --traffic), 1 where the smoke job fails.
"""
import argparse
import datetime
import itertools
import json
import os
import platform
import statistics
import sys
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # must precede the first import of triton

import triton  # noqa: E402

import tritonmm  # noqa: E402
from tritonmm import timing  # noqa: E402
from tritonmm.planner import chosen  # noqa: E402
from tritonmm.precision import resolve_precision  # noqa: E402
from tritonmm.tune import parse_shape  # noqa: E402

from . import first_call, fp8, impls, model_bench, ncu, report, scaling, sweep, traffic  # noqa: E402
from .common import copies, device_ms, rel_err, native_state, tuning_state  # noqa: E402
from .progress import Steps, phase  # noqa: E402

PRESETS = {
    "square": [(s, s, s) for s in (512, 1024, 2048, 4096, 8192)],
    "llm": [(m, n, k) for m in (16, 128, 1024, 8192) for n, k in ((4096, 4096), (4096, 14336), (14336, 4096))],
    "odd": [(1000, 1000, 1000), (1023, 1025, 1027), (4095, 4097, 1531), (77, 4099, 2049)],
}
QUICK = [(1024, 1024, 1024), (4096, 4096, 4096), (1023, 1025, 1027)]
# --quick runs the naive and coalesced rungs up to this many multiply-adds: at 4096^3 they take 0.1-0.5 s a
# call, several seconds each under do_bench's loop, and 1024^3 already shows where they stand.
QUICK_SLOW_CAP = 2048 ** 3
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "tf32x3": torch.float32, "fp16": torch.float16,
          "bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}
# Presets that run on their own, with the dtypes each takes (None: it takes no --dtype).
ALONE = {"sweep": tuple(sweep.DTYPES), "scaling": None, "first-call": first_call.DTYPES,
         "model": tuple(model_bench.DTYPES)}
DRAWN = ("sweep", "first-call")  # the presets whose shapes --draw draws


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


def wanted(name: str, only) -> bool:
    """Whether --impl (only: the substrings given, or None) selects the implementation named."""
    return not only or any(o in name for o in only)


def fp8_label(name, scales) -> str:
    """An fp8 table row's implementation: bench/fp8.py's name and the scale kind."""
    return f"{name}, {scales}-wise"


def impl_names(precision, pinned: bool = True) -> list:
    """The implementations of one table, by name: impls.registry's, or for fp8 bench/fp8.py's per scale kind."""
    if precision == "fp8":
        return [fp8_label(name, kind) for kind in fp8.SCALES for name in (fp8.TORCH, fp8.TRITONMM)]
    return [impl.name for impl in impls.registry(precision, pinned)]


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
        names = [n for n in (fp8.TORCH, fp8.TRITONMM) if wanted(fp8_label(n, kind), only)]
        if names:
            progress.step(f"fp8 {M}x{N}x{K} {kind}-wise scales: {', '.join(names)}", len(names))
            rows += fp8_rows(fp8.measure_shape(M, N, K, kind, rounds, names), names)
    return rows


def measure(precision, shapes, only, progress, rounds=1, pinned=True, slow_cap=impls.SLOW_CAP, ladder_note=None):
    """One row per (shape, implementation). With rounds > 1 every implementation of a shape is
    timed once per round, in turn, and the row keeps the median round: the clock of a
    power-capped GPU drifts by several percent within a minute, and interleaving makes the
    drift hit every implementation alike instead of whichever ran last. pinned=False leaves out
    tritonmm's pinned tiles; the naive and coalesced rungs run up to slow_cap multiply-adds; ladder_note,
    where the CUDA ladder could not be built, stands in for every rung's time."""
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
        for impl in impls.registry(precision, pinned):
            if not wanted(impl.name, only):
                continue
            progress.step(f"{precision} {M}x{N}x{K} {impl.name}")
            tile_name = "cuBLAS" if impl.tile is None else "x".join(map(str, impl.tile))
            row = _row(precision, impl.name, impl.level, tile_name, M, N, K)
            shape_rows.append(row)
            if impl.level == "thread" and ladder_note:
                row["note"] = ladder_note
                continue
            if impl.name in impls.SLOW and M * N * K > slow_cap:
                row["note"] = f"skipped: > {round(slow_cap ** (1 / 3))}^3 (slow)"
                continue
            refused = impl.refuses and impl.refuses(a, b)
            if refused:
                row["note"] = f"refused: {refused}"
                continue
            out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
            impl.run(a, b, out)  # build, compile and tune here, outside the timing
            torch.cuda.synchronize()
            row["rel_err"] = rel_err(out, ref)
            tile = impl.tile
            if impl.name in impls.PLANNED:
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


def compile_tritonmm(jobs: list, progress) -> None:
    """Runs each tritonmm implementation of jobs [(precision, (M, N, K), impl)] once on fresh operands of its
    shape: Triton compiles its kernels (and, where tuning is on, tunes) here, while the CUDA ladder builds
    on its worker thread, instead of one after the other."""
    for precision, (M, N, K), impl in jobs:
        progress.step(f"{precision} {M}x{N}x{K} {impl.name}")
        dtype = DTYPES[precision]
        a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
        impl.run(a, b, torch.empty(M, N, dtype=dtype, device="cuda"))
    torch.cuda.synchronize()


def ladder_ready(build) -> str | None:
    """Waits for the background build of the CUDA ladder (impls.build_ladder_in_background): None once it is
    built, else the note its rows show instead of times (the table goes on without them)."""
    try:
        seconds = build.result()
    except Exception as e:  # nvcc missing or failing: the rest of the table still stands
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        print(f"CUDA ladder not built ({type(e).__name__}: {first}); its rows are left empty", file=sys.stderr)
        return f"not built: {first[:60]}"
    print(f"CUDA ladder built or loaded in {seconds:.1f} s on its worker thread", file=sys.stderr)
    return None


def cpu_smoke() -> tuple:
    """The CPU run: tritonmm.matmul in Triton's interpreter against float64, and the bytes model of
    each tiling at 4096^3. Returns (passed, {title: text}, data for cpu.json)."""
    from tabulate import tabulate
    M, N, K = 64, 48, 40
    a, b = torch.randn(M, K), torch.randn(K, N)
    err = rel_err(tritonmm.matmul(a, b), a.double() @ b.double())
    passed = err < 1e-4
    check = (f"tritonmm.matmul in the interpreter, {M}x{N}x{K} float32: relative error {err:.1e} "
             f"against float64 ({'ok' if passed else 'WRONG'})")
    rows = []
    n = 4096
    for name, tile in [("naive (no reuse)", (1, 1)), ("tiled T=8", (8, 8)), ("tiled T=16", (16, 16)),
                       ("tiled T=32", (32, 32)), ("blocktile 64x64", (64, 64)), ("128x128", (128, 128)),
                       ("128x256", (128, 256))]:
        nbytes = traffic.modeled_bytes(n, n, n, 4, tile)
        rows.append([name, "x".join(map(str, tile)), f"{nbytes / 1e9:.2f}", f"{traffic.intensity(n, n, n, nbytes):.1f}"])
    model = (f"Modeled global traffic for {n}^3 float32 (each input once: "
             f"{traffic.minimum_bytes(n, n, n, 4) / 1e9:.2f} GB):\n"
             + tabulate(rows, headers=["tiling", "tile", "GB moved", "FLOP/byte"]))
    sections = {"The Triton kernel in the interpreter": check, "The bytes model": model}
    return passed, sections, dict(shape=[M, N, K], rel_err=err, passed=passed, traffic=rows)


def given_flags(p: argparse.ArgumentParser, args) -> list:
    """The options args holds away from their defaults, each as typed ("--quick", "--preset sweep",
    "--shape 64x64x64"), in the parser's order."""
    def text(v):
        return "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
    given = []
    for action in p._actions:
        value = getattr(args, action.dest, None)
        if not action.option_strings or action.dest == "help" or value == action.default or value == []:
            continue
        flag = action.option_strings[-1]
        given += ([flag] if value is True else
                  [f"{flag} {text(v)}" for v in value] if isinstance(value, list) else [f"{flag} {text(value)}"])
    return given


def cpu_run(p: argparse.ArgumentParser, args, argv) -> int:
    """No GPU: the CPU smoke job, the options it cannot honour named; its output to --out (cpu.json and
    RESULTS.md). Exits 1 if the smoke job fails, else 3 where only GPU timings were asked for, else 0."""
    unhonoured = [f for f in given_flags(p, args) if not f.startswith("--out ")]
    gpu_only = ["--traffic"] * args.traffic + [f"--preset {name}" for name in args.preset or [] if name in ALONE]
    print("No CUDA GPU found: timing needs one. Running the CPU smoke job instead: "
          "the Triton kernel in Triton's interpreter, and the modeled-traffic table.")
    if unhonoured:
        print(f"Not honoured without a GPU: {', '.join(unhonoured)}.")
    passed, sections, data = cpu_smoke()
    for text in sections.values():
        print(f"\n{text}")
    if args.out:
        out_dir = Path(args.out)
        meta = dict(run_meta(argv), not_honoured=unhonoured)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "cpu.json").write_text(json.dumps({"meta": meta, **data}, indent=1))
        head = "Not honoured without a GPU: " + (", ".join(unhonoured) if unhonoured else "nothing")
        page = report.write_page(out_dir, meta, [("The CPU smoke job", head, "markdown"),
                                                 *((title, text, "text") for title, text in sections.items())])
        print(f"\nwrote {out_dir / 'cpu.json'}\nwrote {page}")
    if not passed:
        return 1
    if gpu_only:
        print(f"Nothing asked for ran: {', '.join(gpu_only)} times GPU kernels only.", file=sys.stderr)
        return 3
    return 0


def run_meta(argv) -> dict:
    """Where and how a run ran, for its tables' headers and files; phases fills in as the run goes."""
    return dict(gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None, torch=torch.__version__,
                triton=triton.__version__, python=platform.python_version(), date=datetime.date.today().isoformat(),
                command="python -m bench " + " ".join(argv if argv is not None else sys.argv[1:]),
                tritonmm_configs=tuning_state() if torch.cuda.is_available() else "the CPU interpreter's heuristic",
                native_dispatch=native_state(), phases={})


def run_sweep(args, meta) -> int:
    """bench/sweep.py's shapes (or a draw) for each dtype; the table, then the summary lines."""
    dtypes = args.dtype or list(sweep.DTYPES)
    if "fp8" in dtypes and not fp8.has_fp8():
        if args.dtype:
            print(f"--dtype fp8 needs FP8 tensor cores (compute capability 8.9+): {meta['gpu']}", file=sys.stderr)
            return 2
        print(f"fp8 left out: {meta['gpu']} has no FP8 tensor cores (compute capability 8.9+)")
        dtypes.remove("fp8")
    meta = dict(meta, rounds=args.rounds)
    drawn = sweep.draw(args.draw, args.seed) if args.draw else None
    if drawn:
        meta["drawn"] = dict(count=args.draw, seed=args.seed)
    rows = []
    progress = Steps(sum(len(sweep.shapes_for(dt, drawn)) for dt in dtypes), "sweep")
    with phase("sweep: tune and time", meta["phases"]):
        for dtype in dtypes:
            rows += sweep.measure(dtype, sweep.shapes_for(dtype, drawn), args.rounds, progress)
    summary = sweep.summarize(rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; tritonmm "
          f"{meta['tritonmm_configs']}; "
          + (f"{args.draw} shapes drawn with seed {args.seed} (bench/sweep.py's draw); " if drawn else "")
          + "graph: device time (common.device_ms) of a CUDA graph replay over the operand copies, per product; "
          f"eager: wall time of back-to-back calls; medians of {args.rounds} interleaved round(s) (eager: at "
          f"least {sweep.EAGER_ROUNDS} of {sweep.EAGER_BUDGET_MS:g} ms); "
          f"x = torch.mm time (torch.bmm for batched products) / tritonmm time" + ("" if "fp8" not in dtypes else
          f"; fp8: {sweep.FP8_NOTE}") + "\n")
    print(report.sweep_table(rows))
    print()
    print("\n".join(summary))
    if args.out:
        for path in report.write_sweep(rows, summary, meta, Path(args.out)):
            print("wrote", path)
    return 0


def run_table(args, meta) -> int:
    """The product table: every implementation of impls.registry per dtype and shape. --quick: three shapes,
    no pinned tritonmm tiles, the naive and coalesced rungs only up to QUICK_SLOW_CAP, and tritonmm untuned
    (TRITONMM_AUTOTUNE=0 unless the environment sets it), so that a cold machine's run is meant to stay under
    90 s on an H100. The CUDA ladder's extension builds on a worker thread while tritonmm's kernels compile."""
    phases = meta["phases"]
    shapes = list(args.shape)
    for preset in args.preset or []:
        shapes += PRESETS[preset]
    if not shapes:
        shapes = QUICK if args.quick else PRESETS["square"] + PRESETS["odd"]
    precisions = args.dtype or (["fp32", "tf32", "bf16"] if args.quick else ["fp32", "tf32", "fp16", "bf16"])
    pinned, slow_cap = (False, QUICK_SLOW_CAP) if args.quick else (True, impls.SLOW_CAP)
    jobs = [(pr, shape, impl) for pr in precisions if pr != "fp8" for shape in shapes
            for impl in impls.registry(pr, pinned) if wanted(impl.name, args.impl)]
    with phase("set up", phases):
        meta["copy_TBps"] = copy_bandwidth_TBps()
    build = impls.build_ladder_in_background() if any(impl.level == "thread" for *_, impl in jobs) else None
    blocks = [job for job in jobs if job[2].level == "block"]
    with phase("compile tritonmm" + (" (the CUDA ladder builds meanwhile)" if build else ""), phases):
        compile_tritonmm(blocks, Steps(len(blocks), "compile"))
    ladder_note = None
    if build:
        with phase("wait for the CUDA ladder's build", phases):
            ladder_note = ladder_ready(build)
    fp8_steps = len([n for n in impl_names("fp8") if wanted(n, args.impl)]) * len(shapes) if "fp8" in precisions else 0
    progress = Steps(len(jobs) + fp8_steps, "table")
    rows = []
    with phase("time the table", phases):
        for precision in precisions:
            rows += measure(precision, shapes, args.impl, progress, args.rounds, pinned, slow_cap, ladder_note)
    meta["peaks_tflops"] = {pr: max((r["tflops"] for r in rows if r["precision"] == pr and is_base(r) and r["tflops"]),
                                    default=None) for pr in precisions}
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; "
          f"device copy {meta['copy_TBps']:.2f} TB/s; device-time medians (common.device_ms)"
          + (f", median of {args.rounds} interleaved rounds" if args.rounds > 1 else "")
          + f"; tritonmm {meta['tritonmm_configs']}")
    for precision in precisions:
        print(f"\n## {precision}" + report.TITLES.get(precision, ""))
        print(report.table([r for r in rows if r["precision"] == precision]))
    if args.out:
        for path in report.write(rows, meta, Path(args.out)):
            print("wrote", path)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="three shapes, fp32, tf32 and bf16, no pinned tritonmm tiles, tritonmm untuned "
                        "(TRITONMM_AUTOTUNE=0 unless set): meant for 90 s or less on an H100 with cold caches")
    p.add_argument("--preset", choices=sorted([*PRESETS, *ALONE]), action="append",
                   help="shape preset (repeatable). These run on their own: 'sweep': tritonmm against torch.mm over "
                        "bench/sweep.py's shapes (or --draw), fp16 and bf16, and fp8 against torch._scaled_mm, CUDA "
                        "graph and eager times; 'scaling': the CUDA ladder and torch.mm over square fp32 sizes "
                        "1024-16384, and the tiling write-ups' claims against them (reads --out's traffic.json for "
                        "claim 1); 'first-call': the first call of new (drawn) shapes with the tuning cache empty, "
                        "and tritonmm's untuned default configs against its tuned ones; 'model': a Llama-like "
                        "model's training step, prefill and decode, aten against tritonmm (bench/model_bench.py)")
    p.add_argument("--traffic", action="store_true",
                   help="runs on its own: bytes each kernel reads (L1, L2, DRAM), measured by Nsight Compute, beside "
                        "the tile model; --shape, --dtype (fp32, fp16, bf16) and --impl narrow it; raw ncu CSVs "
                        "go to OUT/ncu (a temporary directory without --out)")
    p.add_argument("--time-cap", type=float, default=scaling.CAP_S,
                   help="--preset scaling: skip an implementation at a size where a call would take longer than "
                        "this many seconds, extrapolated from the size before (default %(default)s)")
    p.add_argument("--draw", type=int, default=0, metavar="N",
                   help="--preset sweep or first-call: N shapes drawn at random by bench/sweep.py's draw (its kinds "
                        "and classes, none of its listed shapes) instead of the sweep's list (first-call: default "
                        f"{first_call.DEFAULT_DRAW})")
    p.add_argument("--seed", type=int, default=0, help="--draw's seed (default %(default)s)")
    p.add_argument("--shape", type=parse_shape, action="append", default=[], help="MxNxK (repeatable)")
    p.add_argument("--dtype", choices=sorted(DTYPES), action="append",
                   help="fp32 (IEEE), tf32, tf32x3 (float32 accuracy in three TF32 products, against SGEMM "
                        "and TF32), fp16, bf16, fp8 (tritonmm.scaled_mm against torch._scaled_mm: e4m3, tensor-wise "
                        "and row-wise scales, bf16 out; needs compute capability 8.9+) (repeatable; default all but "
                        "tf32x3 and fp8; the sweep: fp16, bf16 and fp8; first-call and model: bf16)")
    p.add_argument("--impl", action="append", help="run implementations whose name contains this (repeatable)")
    p.add_argument("--rounds", type=int, default=1,
                   help="time each implementation this many times, interleaved; report the median and spread "
                        "(3 recommended for the sweep and the model)")
    p.add_argument("--compile", nargs="?", const=",".join(model_bench.COMPILE_STEPS), type=model_bench.compile_steps,
                   metavar="STEPS",
                   help="--preset model: a compiled row beside eager and graph for each step named (train, prefill, "
                        "decode, comma-separated, or all; alone: %(const)s): each variant's step under "
                        "torch.compile (default mode), use_tritonmm's compiled inside the switch, timed against "
                        "aten's compiled step, with the GEMM kernels each ran (cuBLAS/CUTLASS against tritonmm's)")
    p.add_argument("--out", metavar="DIR",
                   help="create DIR and write the run there: RESULTS.md (this run's page, replacing any earlier "
                        "one) and the data: results.json, results.csv and PNG plots (the sweep: sweep.json, "
                        "sweep.csv, sweep.png; first-call: first_call.json; model: model.json; without a GPU: "
                        "cpu.json)")
    return p


def check(p: argparse.ArgumentParser, args) -> None:
    """The combinations of options a run refuses (argparse's usage error, exit 2), GPU or not."""
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    alone = [preset for preset in args.preset or [] if preset in ALONE]
    if args.compile and alone != ["model"]:
        p.error("--compile compiles the model preset's steps: use it with --preset model")
    if args.draw and not set(alone) & set(DRAWN):
        p.error("--draw draws the sweep's shapes: use it with --preset sweep or --preset first-call")
    if args.draw and not 1 <= args.draw <= sweep.DRAW_MAX:
        p.error(f"--draw takes 1-{sweep.DRAW_MAX} shapes")
    if args.traffic:
        if args.preset or args.quick or args.rounds > 1:
            p.error("--traffic runs on its own: no --preset, --quick or --rounds")
        if not set(args.dtype or []) <= {"fp32", "fp16", "bf16"}:
            p.error("--traffic profiles fp32 (IEEE), fp16 and bf16")
    if alone:
        name, dtypes = alone[0], ALONE[alone[0]]
        if len(args.preset) > 1 or args.shape or args.impl or args.quick or (args.dtype and dtypes is None):
            p.error(f"--preset {name} runs on its own: no other preset, --shape, --impl or --quick"
                    + (", nor --dtype" if dtypes is None else ""))
        if dtypes and not set(args.dtype or []) <= set(dtypes):
            p.error(f"--preset {name} runs {', '.join(dtypes[:-1])} and {dtypes[-1]} only" if len(dtypes) > 1
                    else f"--preset {name} runs {dtypes[0]} only")


def main(argv=None) -> int:
    p = parser()
    args = p.parse_args(argv)
    check(p, args)
    if not torch.cuda.is_available():
        return cpu_run(p, args, argv)
    preset = next((name for name in args.preset or [] if name in ALONE), None)
    if "fp8" in (args.dtype or []) and preset is None and not fp8.has_fp8():  # the sweep says so itself
        p.error(f"--dtype fp8 needs FP8 tensor cores (compute capability 8.9+): {torch.cuda.get_device_name()}")
    # tritonmm tunes every shape it meets (its rows are "autotuned"), except in --quick, where tuning every
    # product on a cold cache would be most of the run's minutes; the environment's own setting wins. Set
    # before run_meta, so that the headers say which it was.
    os.environ.setdefault("TRITONMM_AUTOTUNE", "0" if args.quick else "1")
    meta = run_meta(argv)
    if args.traffic:
        return ncu.run(args, meta)
    if preset == "scaling":
        return scaling.run(args, meta)
    if preset == "sweep":
        return run_sweep(args, meta)
    if preset == "first-call":
        return first_call.run(args, meta)
    if preset == "model":
        return model_bench.run(args, meta)
    return run_table(args, meta)


if __name__ == "__main__":
    sys.exit(main())
