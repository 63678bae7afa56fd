"""python -m bench --preset first-call: what the first call of a new shape costs, and what tuning buys.

    python -m bench --preset first-call --draw 6 --seed 1 --rounds 3 --dtype bf16

For each shape of a draw (bench/sweep.py's draw: its kinds, layouts, batched products and classes):

- first call: tritonmm.matmul on the shape with an empty tuning cache (a fresh TRITONMM_CACHE_DIR, nothing
  remembered in the process), host wall time between two torch.cuda.synchronize() calls. It plans, tunes
  (the eager plan, and the graph plan where that differs), and compiles what Triton's caches lack: this
  column is the cost with the kernel caches as the run found them (on a fresh machine, cold; later shapes
  of a draw reuse the kernels earlier ones compiled).
- compiled: the same call again in another empty tuning cache. Every kernel it needs is compiled now, so
  this is what a new shape costs a process whose kernels are warm and whose tuning cache is cold: the
  tuning, and the configs it timed ("configs").
- untuned first call: the first call with tuning off (TRITONMM_AUTOTUNE=0) and an empty cache, kernels
  compiled: planning alone, the planner's default config.
- untuned against tuned: three CUDA graphs over the same operand copies (the sweep's graph column: the
  copies rotate past the L2), one captured with the default config, one with the tuned configs, and torch's;
  replayed in interleaved rounds, device time per product. The summary gives the geomean over the draw
  of default time / tuned time (above 1: tuning helps), and each against torch.
"""
import contextlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch
from tabulate import tabulate

from tritonmm import timing, tuning

from . import report, sweep
from .common import REF_MAX_MACS, device_ms, rel_err, tritonmm_config
from .progress import Steps, phase

DTYPES = ("bf16", "fp16")  # the first is the default
DEFAULT_DRAW = 6
COLUMNS = ["shape", "layout", "kind", "class", "first call s", "compiled s", "configs", "untuned first call ms",
           "torch us", "untuned us", "tuned us", "tuned / untuned", "untuned x torch", "tuned x torch",
           "untuned config", "tuned config", "rel err"]


@contextlib.contextmanager
def tuning_cache(directory: Path, tune: bool):
    """Inside the block, tritonmm reads and writes its tuning cache in directory, remembers nothing from
    before, and tunes (tune) or takes its default config where the cache holds none; both environment
    variables are restored after it, and what it remembered is forgotten."""
    saved = {name: os.environ.get(name) for name in ("TRITONMM_CACHE_DIR", "TRITONMM_AUTOTUNE")}
    os.environ.update(TRITONMM_CACHE_DIR=str(directory), TRITONMM_AUTOTUNE="1" if tune else "0")
    tuning.forget()
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        tuning.forget()


def first_call_s(call, ops) -> tuple:
    """(seconds, configs timed) of call(*ops), synchronized on both sides: host wall time."""
    torch.cuda.synchronize()
    calls, start = timing.calls, time.perf_counter()
    call(*ops)
    torch.cuda.synchronize()
    return time.perf_counter() - start, timing.calls - calls


def measure_shape(dtype: str, shape: sweep.Shape, rounds: int, scratch: Path, progress) -> dict:
    """One row of the table for shape (see the module's docstring), its caches under scratch."""
    sets, calls, reference, _ = sweep._products(dtype, shape)
    tritonmm_call = calls["tritonmm"]
    row = dict(dtype=dtype, shape=shape.text, layout=shape.layout, kind=shape.kind,
               cls=sweep.class_name(sweep.shape_class(shape)), Z=shape.Z, M=shape.M, N=shape.N, K=shape.K)
    progress.step(f"{dtype} {shape.text} {shape.layout}: first call, caches as found")
    with tuning_cache(scratch / "first", tune=True):
        row["first_s"], _ = first_call_s(tritonmm_call, sets[0])
    progress.step(f"{dtype} {shape.text} {shape.layout}: first call, kernels compiled")
    with tuning_cache(scratch / "tuned", tune=True):
        row["compiled_s"], row["configs"] = first_call_s(tritonmm_call, sets[0])
    progress.step(f"{dtype} {shape.text} {shape.layout}: untuned against tuned, {rounds} round(s)")
    graphs, errs = {"torch": sweep._graph(calls["torch"], sets)}, []
    # Each tritonmm graph is captured inside its own cache and setting: a captured graph keeps the kernels
    # and configs it launched, whatever tritonmm would choose later.
    for name, directory, tune in (("untuned", "untuned", False), ("tuned", "tuned", True)):
        with tuning_cache(scratch / directory, tune=tune):
            seconds, _ = first_call_s(tritonmm_call, sets[0])  # the untuned one plans here; the tuned one looks up
            if not tune:
                row["untuned_first_ms"] = seconds * 1e3
            if shape.macs <= REF_MAX_MACS:
                errs.append(rel_err(tritonmm_call(*sets[0]), reference(*sets[0])))
            row[f"{name}_config"] = tritonmm_config(*sets[0], captured=True)[0]
            graphs[name] = sweep._graph(tritonmm_call, sets)
    times = {name: [] for name in graphs}
    for _ in range(rounds):  # interleaved: the clock's drift hits all three alike
        for name, graph in graphs.items():
            times[name].append(device_ms(graph.replay) / len(sets) * 1e3)
    us = {name: statistics.median(t) for name, t in times.items()}
    row.update({f"{name}_us": t for name, t in us.items()}, rel_err=max(errs) if errs else None,
               tuned_gain=us["untuned"] / us["tuned"], untuned_x_torch=us["torch"] / us["untuned"],
               tuned_x_torch=us["torch"] / us["tuned"])
    return row


def table(rows: list) -> str:
    """The rows, times in the units the column names; x columns are time ratios (above 1: the latter faster)."""
    def num(v, spec):
        return "-" if v is None else format(v, spec)
    return tabulate([[r["shape"], r["layout"], r["kind"], r["cls"], f"{r['first_s']:.2f}", f"{r['compiled_s']:.2f}",
                      r["configs"], f"{r['untuned_first_ms']:.1f}", f"{r['torch_us']:.1f}", f"{r['untuned_us']:.1f}",
                      f"{r['tuned_us']:.1f}", f"{r['tuned_gain']:.2f}", f"{r['untuned_x_torch']:.2f}",
                      f"{r['tuned_x_torch']:.2f}", r["untuned_config"], r["tuned_config"], num(r["rel_err"], ".1e")]
                     for r in rows], headers=COLUMNS, disable_numparse=True)


def geomean(values) -> float:
    values = list(values)
    return statistics.geometric_mean(values) if values else float("nan")


def summary(rows: list) -> list:
    """The draw in a few lines: first-call costs (median and worst), and the geomeans of the time ratios."""
    worst = min(rows, key=lambda r: r["tuned_gain"])
    return [f"first call, caches as found: median {statistics.median(r['first_s'] for r in rows):.2f} s, "
            f"max {max(r['first_s'] for r in rows):.2f} s; kernels compiled (tuning alone): median "
            f"{statistics.median(r['compiled_s'] for r in rows):.2f} s, max {max(r['compiled_s'] for r in rows):.2f} s",
            f"untuned time / tuned time over {len(rows)} shapes: geomean {geomean(r['tuned_gain'] for r in rows):.2f}, "
            f"min {worst['tuned_gain']:.2f} at {worst['shape']} {worst['layout']}",
            f"torch time / tritonmm time: untuned geomean {geomean(r['untuned_x_torch'] for r in rows):.2f}, "
            f"tuned geomean {geomean(r['tuned_x_torch'] for r in rows):.2f}"]


def run(args, meta: dict) -> int:
    """The preset: measures the draw, prints the table and the summary, writes first_call.json and
    RESULTS.md under --out."""
    dtype = (args.dtype or DTYPES)[0]
    shapes = sweep.draw(args.draw or DEFAULT_DRAW, args.seed)
    meta = dict(meta, rounds=args.rounds, drawn=dict(count=len(shapes), seed=args.seed), dtype=dtype)
    progress = Steps(3 * len(shapes), "first-call")
    rows = []
    with phase("first calls, untuned and tuned", meta["phases"]), \
            tempfile.TemporaryDirectory(prefix="bench-first-call-") as scratch:
        for i, shape in enumerate(shapes):
            rows.append(measure_shape(dtype, shape, args.rounds, Path(scratch) / str(i), progress))
    lines = summary(rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, triton {meta['triton']}, {meta['date']}; {dtype}, "
          f"{len(shapes)} shapes drawn with seed {args.seed} (bench/sweep.py's draw); first calls: host wall time, "
          f"synchronized; us: device time of a CUDA graph replay over operand copies, per product, medians of "
          f"{args.rounds} interleaved round(s)\n")
    print(table(rows))
    print("\n" + "\n".join(lines))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "first_call.json").write_text(json.dumps({"meta": meta, "summary": lines, "rows": rows}, indent=1))
        page = report.write_page(out, meta, [("Summary", "\n".join(lines), "text"),
                                             ("Every shape", table(rows), "text")])
        print(f"wrote {out / 'first_call.json'}\nwrote {page}")
    return 0
