"""The device check of the Gluon GEMM (tritonmm/kernels/gluon_gemm.py), for an H100 with Triton >= 3.8:

    python -m bench.gluon_check                         # every schedule: correctness, then 4096^3, 8192^3, 1536^3
    python -m bench.gluon_check --schedule cooperative --rounds 7 --layout NT

1. Correctness per schedule: odd, non-square shapes with edges inside tiles, bf16 and fp16, B row-major (NN)
   and the transposed view of an N x K weight (NT), into an out filled with NaN; the relative Frobenius error
   against float64, and the same inputs run twice, which must give the same bits (a differing rerun is a race).
2. Timing, the house method (bench.common): gluon and torch.mm timed once per round, in turn, each a
   read-flushed device-time median (CUDA events) after warm-up, over operand copies rotated past the L2;
   medians of the rounds. The timed operands' first set is checked against float64 too (where that is cheap).

Each schedule runs in a child process with a time limit: a kernel that hangs (a barrier count wrong on the
device) is reported as such and the other schedules still run. Prints the versions first and a table last;
with $OUT set, writes every number to $OUT/gluon_check.json. Exits non-zero on Triton < 3.8, on a GPU other
than compute capability 9.0, and on any wrong result or hang.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

import torch
import triton

TIMED = [(4096, 4096, 4096), (8192, 8192, 8192), (1536, 1536, 1536)]
CHECKED = [(1, 8, 8), (130, 264, 520), (1000, 1000, 1000), (2047, 3000, 1032), (300, 8, 4104), (4099, 264, 8)]
BOUND = {"bf16": 1e-2, "fp16": 2e-3}  # tests/test_ops.py's bounds
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def operands(M, N, K, dtype, layout):
    """(a, b): a (M, K) row-major; b (K, N) row-major ("NN") or the transposed view of a row-major (N, K) ("NT")."""
    a = torch.randn(M, K, device="cuda").to(dtype)
    return a, (torch.randn(K, N, device="cuda").to(dtype) if layout == "NN" else
               torch.randn(N, K, device="cuda").to(dtype).T)


def check(schedule: str):
    """Yields one result dict per (shape, dtype, layout): rel_err, whether a second run gave the same bits."""
    from tritonmm.kernels import gluon_gemm
    from .common import rel_err
    for dtype in DTYPES:
        for layout in ("NN", "NT"):
            for M, N, K in CHECKED:
                a, b = operands(M, N, K, DTYPES[dtype], layout)
                out = torch.full((M, N), float("nan"), dtype=DTYPES[dtype], device="cuda")
                first = gluon_gemm.matmul(a, b, out=out, schedule=schedule).clone()
                out.fill_(float("nan"))
                gluon_gemm.matmul(a, b, out=out, schedule=schedule)
                torch.cuda.synchronize()
                err = rel_err(out, a.double() @ b.double())
                yield dict(kind="check", schedule=schedule, shape=f"{M}x{N}x{K}", dtype=dtype, layout=layout,
                           rel_err=err, same_bits=torch.equal(first, out), ok=err < BOUND[dtype] and
                           torch.equal(first, out))


def timed(schedule: str, shapes, layout: str, rounds: int):
    """Yields one timing dict per (shape, dtype): gluon and torch.mm ms (median round) and TFLOP/s."""
    import itertools
    from tritonmm import timing
    from tritonmm.kernels import gluon_gemm
    from .common import REF_MAX_MACS, copies, interleaved_times, rel_err
    for M, N, K in shapes:
        for dtype in DTYPES:
            sets = [operands(M, N, K, DTYPES[dtype], layout) + (torch.empty(M, N, dtype=DTYPES[dtype], device="cuda"), )
                    for _ in range(copies((M * K + K * N) * 2))]
            a, b, out = sets[0]
            err = rel_err(gluon_gemm.matmul(a, b, out=out.fill_(float("nan")), schedule=schedule),
                          a.double() @ b.double()) if M * N * K <= REF_MAX_MACS else None
            fns = {"gluon": lambda a, b, out: gluon_gemm.matmul(a, b, out=out, schedule=schedule),
                   "torch": lambda a, b, out: torch.mm(a, b, out=out)}
            rotating = {name: (lambda fn=fn, cycle=itertools.cycle(sets): fn(*next(cycle))) for name, fn in fns.items()}
            times = interleaved_times(rotating, rounds)
            ms = {name: statistics.median(t) for name, t in times.items()}
            yield dict(kind="time", schedule=schedule, shape=f"{M}x{N}x{K}", dtype=dtype, layout=layout, ms=ms,
                       spread_pct={n: 100 * (max(t) - min(t)) / ms[n] for n, t in times.items()},
                       tflops={n: timing.tflops(M, N, K, v) for n, v in ms.items()}, ratio=ms["torch"] / ms["gluon"],
                       rel_err=err, ok=err is None or err < BOUND[dtype])


def child(args):
    """One schedule, in this process: resources of its compiled kernels, correctness, then timing; a JSON line
    a result, flushed as it comes, for the parent to read even if a later launch hangs."""
    from tritonmm.kernels import gluon_build
    for dtype in DTYPES:
        try:
            info = gluon_build.resources(gluon_build.compile_sm90(dtype, args.layout == "NT", args.schedule))
        except Exception as e:  # noqa: BLE001 (the report only informs: the checks below still run)
            print(json.dumps(dict(kind="note", schedule=args.schedule, text=f"resources: {e!r}"[:300])), flush=True)
            continue
        print(json.dumps(dict(kind="compile", schedule=args.schedule, dtype=dtype, layout=args.layout, **info)),
              flush=True)
    for result in check(args.schedule):
        print(json.dumps(result), flush=True)
    shapes = TIMED[:1] if args.quick else TIMED
    for result in timed(args.schedule, shapes, args.layout, args.rounds):
        print(json.dumps(result), flush=True)


def run_child(schedule: str, args) -> tuple:
    """(results, what went wrong or None) of one schedule's child process."""
    cmd = [sys.executable, "-m", "bench.gluon_check", "--child", "--schedule", schedule, "--rounds", str(args.rounds),
           "--layout", args.layout] + (["--quick"] if args.quick else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        stdout, problem = proc.stdout, None if proc.returncode == 0 else f"exit {proc.returncode}: " + \
            (proc.stderr.strip().splitlines() or ["?"])[-1][:300]
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        problem = f"timed out after {args.timeout} s: a hang (barrier counts or phases) or a very slow compile"
    results = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return results, problem


def report(results: list, problems: dict) -> bool:
    """Prints the per-schedule summary and the timing table; returns whether everything passed."""
    ok = not problems
    print("\n== resources (ptxas, sm_90a): shared bytes, registers at launch, setmaxnreg, spills")
    for r in (r for r in results if r["kind"] == "compile"):
        print(f"{r['schedule']:15s} {r['dtype']} {r['layout']}: shared {r['shared']}, regs {r['registers']}, "
              f"setmaxnreg {r['setmaxnreg']}, spills {r['spill_stores']}/{r['spill_loads']}, stack {r['stack']}")
    for r in (r for r in results if r["kind"] == "note"):
        print(f"{r['schedule']:15s} note: {r['text']}")
    print("\n== correctness against float64 (max rel. Frobenius error; bounds bf16 1e-2, fp16 2e-3)")
    for schedule in dict.fromkeys(r["schedule"] for r in results):
        checks = [r for r in results if r["kind"] == "check" and r["schedule"] == schedule]
        bad = [r for r in checks if not r["ok"]]
        ok &= not bad and bool(checks)
        worst = {d: max((r["rel_err"] for r in checks if r["dtype"] == d), default=None) for d in DTYPES}
        print(f"{schedule:15s} {len(checks) - len(bad)}/{len(checks)} pass; worst " +
              ", ".join(f"{d} {e:.2e}" for d, e in worst.items() if e is not None))
        for r in bad:
            print(f"   FAIL {r['shape']} {r['dtype']} {r['layout']}: rel_err {r['rel_err']:.3e}, "
                  f"rerun same bits {r['same_bits']}")
    for schedule, problem in problems.items():
        print(f"{schedule:15s} PROBLEM: {problem}")
    rows = [r for r in results if r["kind"] == "time"]
    ok &= all(r["ok"] for r in rows)
    print("\n== timing: median of rounds, each a read-flushed device-time median over rotated operand copies")
    print(f"{'shape':16s} {'dtype':5s} {'layout':6s} {'schedule':15s} {'gluon TFLOP/s':>13s} {'torch TFLOP/s':>13s} "
          f"{'ratio':>6s} {'spread %':>9s} {'rel err':>8s}")
    for r in sorted(rows, key=lambda r: (r["shape"], r["dtype"], r["schedule"])):
        err = "-" if r["rel_err"] is None else f"{r['rel_err']:.1e}"
        print(f"{r['shape']:16s} {r['dtype']:5s} {r['layout']:6s} {r['schedule']:15s} {r['tflops']['gluon']:13.1f} "
              f"{r['tflops']['torch']:13.1f} {r['ratio']:6.3f} {max(r['spread_pct'].values()):9.1f} {err:>8s}")
    print("ratio: torch.mm time / gluon time (above 1: gluon faster)")
    return ok


def can_run(what: str) -> bool:
    """Prints the versions; where the Gluon kernels cannot run here (Triton < 3.8, no compute capability 9.0 GPU),
    says why on stderr and returns False. The device checks (this one, bench.gluon_tf32x3) start with it."""
    from tritonmm.kernels import gluon_gemm
    print(f"triton {triton.__version__} ({os.path.dirname(triton.__file__)}), torch {torch.__version__}", flush=True)
    ok, reason = gluon_gemm.available()
    if not ok:
        print(f"cannot run {what}: {reason}", file=sys.stderr)
    return ok


def main(argv=None) -> int:
    from tritonmm.kernels import gluon_gemm
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedule", action="append", choices=list(gluon_gemm.SCHEDULES),
                        help="schedules to check (default: all, in SCHEDULES' order)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--layout", choices=["NN", "NT"], default="NN", help="B's layout in the timing")
    parser.add_argument("--quick", action="store_true", help="time 4096^3 only")
    parser.add_argument("--timeout", type=int, default=150, help="seconds for one schedule's child process")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not can_run("the Gluon GEMM"):
        return 2
    if args.child:
        args.schedule = args.schedule[0]
        child(args)
        return 0
    print(f"{torch.cuda.get_device_name()}, {torch.cuda.get_device_properties(0).multi_processor_count} SMs",
          flush=True)
    results, problems = [], {}
    for schedule in args.schedule or list(gluon_gemm.SCHEDULES):
        found, problem = run_child(schedule, args)
        print(f"{schedule}: {len(found)} results" + (f"; {problem}" if problem else ""), flush=True)
        results += found
        if problem:
            problems[schedule] = problem
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gluon_check.json"), "w") as f:
            json.dump(dict(triton=triton.__version__, torch=torch.__version__, device=torch.cuda.get_device_name(),
                           results=results, problems=problems), f, indent=1)
    return 0 if report(results, problems) else 1


if __name__ == "__main__":
    sys.exit(main())
