"""python -m bench --preset scaling: the claims of introductory write-ups on shared-memory tiling, on this GPU.

The claims and their numbers are those of notes shared with the project (tiling-claims.md,
kept beside the repository); CLAIMS below copies them, since the device machine has only
the repository. Measured here: square fp32 (IEEE) products from 1024^2 to 16384^2 with the
coalesced kernel, the classic T=16 and T=32 tiled kernels, the rest of the CUDA ladder (of
which the fastest is "the best CUDA rung") and torch.mm; every rung of the ladder once more
at sizes that are no multiple of any tile. An implementation is skipped at a size when its
time per call, extrapolated (N^3) from the size before, exceeds the cap: do_bench calls it
about eight times. Claim 1 is about traffic: it reads traffic.json from --traffic if the
same --out directory has one.

verdicts() turns measurements into the "claim | their setup | measured here | holds?" rows
and needs no GPU, so it is tested with made-up measurements.
"""
import json
import statistics
from pathlib import Path

import torch
from tabulate import tabulate

from . import impls, report
from .common import device_ms, rel_err
from .progress import Steps

SIZES = (1024, 2048, 4096, 8192, 16384)
ODD = (1000, 1025)
CAP_S = 3.0
BASE = "cuda coalesced"  # the write-ups' baseline for the speedups (claim 6)
NAMED = ("cuda naive", "cuda coalesced", "cuda tiled T=16", "cuda tiled T=32", "torch.mm")
TILED = ("cuda tiled T=16", "cuda tiled T=32")
BEST = "best CUDA rung"
SLACK = 1.5  # a measured ratio within 1.5x of theirs (either way) "holds"

# (number, claim, their setup and numbers), from tiling-claims.md
CLAIMS = [
    (1, "TxT tiles cut global (HBM) reads T-fold: 2N^3/T instead of 2N^3",
     "N = 1024 fp32: naive 2.0 billion float reads; T=4 512 M; T=8 256 M; T=16 128 M; T=32 64 M"),
    (2, "T-fold fewer bytes is T-fold higher arithmetic intensity: the kernel moves from memory-bound toward "
        "compute-bound", "same"),
    (3, "T=16 or T=32 is the practical sweet spot; two 128x128 fp32 tiles (128 KB) exceed shared memory",
     "~100 KB shared memory per SM (L4)"),
    (4, "the shared-memory kernel beats the naive one by about 40%", "L4, 8192^2 fp32: 0.553 s vs 0.900 s"),
    (5, "torch.mm is about 8x faster than that tiled kernel", "L4, 2048^2 fp32: 1.11 ms vs 8.32 ms"),
    (6, "T=32 tiling is 1.58x a coalesced baseline, and \"saves ~37% memory\"",
     "T4, 16384^2 fp32: 9.04 s vs 14.32 s"),
    (7, "the speedup grows with size: 2K^2 to 16K^2 gave \"a 4x larger speedup gain\"", "T4, fp32"),
    (8, "the classic kernels assume N is a multiple of the tile size", "all of them launch N/T x N/T blocks"),
]


# ---- measurement (GPU) --------------------------------------------------------------------------

def estimate_s(prev, n: int) -> float | None:
    """Seconds per call at size n, extrapolated as n^3 from prev = (size, ms), or None without one."""
    if prev is None:
        return None
    size, ms = prev
    return ms / 1e3 * (n / size) ** 3


def measure(sizes=SIZES, cap_s=CAP_S, rounds=1, progress=None) -> dict:
    """Times every rung of the CUDA ladder and torch.mm at each square size (fp32, IEEE), rounds
    interleaved as bench/__main__.py's measure() does; checks each rung at the ODD sizes. progress, a
    progress.Steps, hears of every timing. Returns {"cells": [{impl, n, ms, est_s, rel_err, note}],
    "odd": [{impl, n, rel_err}], ...}."""
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    ladder = [i for i in impls.registry("fp32") if i.level == "thread"]
    chosen = ladder + [i for i in impls.registry("fp32") if i.name == "torch.mm"]
    last, cells = {}, []
    for n in sizes:
        a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        ref = a.double() @ b.double()
        out = torch.empty(n, n, device="cuda")
        timed = []
        for impl in chosen:
            est = estimate_s(last.get(impl.name), n)
            cell = dict(impl=impl.name, n=n, ms=None, est_s=est, rel_err=None, note=None)
            cells.append(cell)
            if est is not None and est > cap_s:
                cell["note"] = f"skipped: ~{est:.1f} s/call > {cap_s:g} s cap"
                if progress:
                    progress.step(f"{impl.name} {n}^2: skipped (over the cap)", rounds)
                continue
            out.fill_(float("nan"))
            impl.run(a, b, out)  # builds and warms up outside the timing
            torch.cuda.synchronize()
            cell["rel_err"] = rel_err(out, ref)
            # device_ms empties the L2 before every call, so one operand pair is as cold as a rotation of them
            timed.append((cell, lambda impl=impl: impl.run(a, b, out), []))
        for _ in range(rounds):
            for cell, fn, times in timed:
                if progress:
                    progress.step(f"{cell['impl']} {n}^2")
                times.append(device_ms(fn))
        for cell, fn, times in timed:
            cell["ms"] = statistics.median(times)
            last[cell["impl"]] = (n, cell["ms"])
        del a, b, ref, out
        torch.cuda.empty_cache()
    odd = []
    for n in ODD:
        a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
        ref = a.double() @ b.double()
        for impl in ladder:
            out = torch.full((n, n), float("nan"), device="cuda")
            impl.run(a, b, out)
            odd.append(dict(impl=impl.name, n=n, rel_err=rel_err(out, ref)))
    return dict(sizes=list(sizes), cap_s=cap_s, rounds=rounds, ladder=[i.name for i in ladder], cells=cells, odd=odd,
                tiles={i.name: "x".join(map(str, i.tile)) for i in ladder},
                smem_per_sm=torch.cuda.get_device_properties(0).shared_memory_per_multiprocessor)


# ---- derived series and verdicts (pure) ----------------------------------------------------------

def ms(meas: dict, impl: str, n: int) -> float | None:
    return next((c["ms"] for c in meas["cells"] if c["impl"] == impl and c["n"] == n), None)


def best_rung(meas: dict, n: int):
    """(name, ms) of the fastest CUDA rung above the classic tiled kernel at size n, or None."""
    upper = [r for r in meas["ladder"] if r not in NAMED and "tiled" not in r]
    timed = [(r, ms(meas, r, n)) for r in upper if ms(meas, r, n)]
    return min(timed, key=lambda t: t[1]) if timed else None


def series(meas: dict) -> dict:
    """{name: {n: ms}} for the named implementations and the best CUDA rung (a per-size pick)."""
    out = {name: {n: ms(meas, name, n) for n in meas["sizes"] if ms(meas, name, n)} for name in NAMED}
    out[BEST] = {n: best_rung(meas, n)[1] for n in meas["sizes"] if best_rung(meas, n)}
    return out


def speedups(times: dict, base: str = BASE) -> dict:
    """{name: {n: base time / its time}} where both were timed."""
    return {name: {n: times[base][n] / t for n, t in by.items() if n in times.get(base, {})}
            for name, by in times.items()}


def compare(theirs: float, ours: float | None, slack: float = SLACK) -> str:
    """Verdict on a ratio: "holds" within slack of theirs, "direction only" on the same side of 1,
    "does not hold" on the other side, "not measured" without a measurement."""
    if ours is None:
        return "not measured"
    if theirs / slack <= ours <= theirs * slack:
        return "holds"
    return "direction only" if (ours > 1) == (theirs > 1) else "does not hold"


def _size(times: dict, wanted: int, *names) -> int | None:
    """wanted if every named series has it, else the largest size all of them have."""
    common = sorted(set.intersection(*(set(times.get(name, {})) for name in names)))
    return wanted if wanted in common else (common[-1] if common else None)


def _at(n, wanted):
    return f"{n}^2" + ("" if n == wanted else f" (not {wanted}^2: capped)")


def _tiled(times, n):
    """The faster of the T=16 and T=32 kernels at n: "the shared-memory kernel" of claims 4 and 5."""
    return min((t for t in TILED if n in times.get(t, {})), key=lambda t: times[t][n], default=TILED[-1])


def _claim1(traffic_rows):
    if not traffic_rows:
        return "see python -m bench --traffic", "not measured"
    rungs = ("cuda naive", "cuda coalesced") + tuple(f"cuda tiled T={t}" for t in (8, 16, 32))
    sub = [r for r in traffic_rows if r["dtype"] == "fp32" and r["M"] == r["N"] == r["K"] and r["impl"] in rungs
           and r.get("model_read_bytes")]
    if not sub:
        return "the traffic run has no naive or tiled rung", "not measured"
    n = min(r["M"] for r in sub)  # the write-ups' N = 1024 when it was profiled
    sub = [r for r in sub if r["M"] == n]
    levels = {"loads issued (L1 requests)": "l1_x_model", "L2 reads by the SMs": "l2_x_model",
              "HBM reads": "dram_x_model"}
    levels = {level: key for level, key in levels.items() if any(r.get(key) is not None for r in sub)}
    measured = "; ".join(f"{level} / model: " + ", ".join(
        f"{r['impl'].replace('cuda ', '')} {r[key]:.2f}" for r in sub if r.get(key) is not None)
        for level, key in levels.items())
    # "holds" at a level where every rung's measured reads are within 2x of the model's 2N^3/T
    held = [level for level, key in levels.items() if all(r.get(key) and 0.5 <= r[key] <= 2 for r in sub)]
    missed = [level for level in levels if level not in held]
    verdict = (f"holds for {' and '.join(held)}" if held else "does not hold") + \
        (f"; not for {' and '.join(missed)} (caches serve re-reads the model counts)" if held and missed else "")
    return f"N={n}: {measured}", verdict


def _claim3(meas, times):
    smem = meas.get("smem_per_sm")
    have = f"{smem // 1024} KB shared memory per SM, so 128 KB of tiles fit; " if smem else ""
    n = _size(times, max(meas["sizes"], default=0), BEST, *TILED)
    if n is None:
        return have + "ladder not timed", "not measured"
    best, t = best_rung(meas, n), _tiled(times, n)
    gain = times[t][n] / best[1]
    tile = meas.get("tiles", {}).get(best[0], "?")
    return (f"{have}at {n}^2 the best rung ({best[0]}, {tile} tiles) is x{gain:.1f} the best classic tiled kernel "
            f"({t})", "holds" if gain < SLACK else "does not hold")


def verdicts(meas: dict, traffic_rows=None) -> list:
    """One row per claim: {"#", "claim", "their setup and numbers", "measured here", "holds?"}."""
    times = series(meas)
    up = speedups(times)
    out = {1: _claim1(traffic_rows), 3: _claim3(meas, times),
           2: ("see roofline.png of python -m bench: modeled intensity against measured TFLOP/s", "not replayed here")}
    n = _size(times, 8192, "cuda naive", *TILED)
    if n:
        t = _tiled(times, n)
        s = times["cuda naive"][n] / times[t][n]
        out[4] = (f"{_at(n, 8192)}: {t} {times[t][n]:.1f} ms vs naive {times['cuda naive'][n]:.1f} ms: x{s:.2f} "
                  f"(theirs x{0.900 / 0.553:.2f})", compare(0.900 / 0.553, s))
    n = _size(times, 2048, "torch.mm", *TILED)
    if n:
        t = _tiled(times, n)
        s = times[t][n] / times["torch.mm"][n]
        out[5] = (f"{_at(n, 2048)}: torch.mm {times['torch.mm'][n]:.2f} ms vs {t} {times[t][n]:.2f} ms: x{s:.1f} "
                  f"(theirs x{8.32 / 1.11:.1f})", compare(8.32 / 1.11, s))
    t32 = up.get("cuda tiled T=32", {})
    n = _size(times, 16384, BASE, "cuda tiled T=32")
    if n:
        memory = "memory: see --traffic"
        fp32 = [r for r in traffic_rows or [] if r["dtype"] == "fp32" and r.get("dram_read_bytes")]
        dram = {r["impl"]: r for r in fp32 if r["M"] == max(q["M"] for q in fp32)}  # the largest profiled shape
        if BASE in dram and "cuda tiled T=32" in dram:
            saved = 1 - dram["cuda tiled T=32"]["dram_read_bytes"] / dram[BASE]["dram_read_bytes"]
            memory = f"HBM reads {100 * saved:.0f}% fewer at {dram[BASE]['shape']} (--traffic)"
        out[6] = (f"{_at(n, 16384)}: T=32 {times['cuda tiled T=32'][n]:.0f} ms vs coalesced {times[BASE][n]:.0f} ms: "
                  f"x{t32[n]:.2f} (theirs x{14.32 / 9.04:.2f}); {memory}", compare(14.32 / 9.04, t32[n]))
    if 2048 in t32 and max(t32) > 2048:
        top = max(t32)
        growth = t32[top] / t32[2048]
        out[7] = (f"T=32 over coalesced: x{t32[2048]:.2f} at 2048^2, x{t32[top]:.2f} at {_at(top, 16384)}: "
                  f"the speedup changes x{growth:.2f} (theirs x4)", compare(4.0, growth))
    if meas.get("odd"):
        worst = max(meas["odd"], key=lambda r: r["rel_err"])
        wrong = sorted({f"{r['impl']} at {r['n']}" for r in meas["odd"] if not r["rel_err"] < 1e-4})
        sizes = ", ".join(map(str, sorted({r["n"] for r in meas["odd"]})))
        out[8] = ((f"wrong: {', '.join(wrong)}" if wrong else
                   f"all {len({r['impl'] for r in meas['odd']})} rungs correct at N = {sizes} "
                   f"(worst rel err {worst['rel_err']:.1e}, {worst['impl']})"),
                  "holds here" if wrong else "not here: every rung bound-checks its tiles")
    missing = ("not measured (capped or not run)", "not measured")
    return [{"#": num, "claim": claim, "their setup and numbers": setup, "measured here": out.get(num, missing)[0],
             "holds?": out.get(num, missing)[1]} for num, claim, setup in CLAIMS]


# ---- tables and chart -----------------------------------------------------------------------------

def _ms(t):
    return f"{t:.0f}" if t >= 100 else f"{t:.3g}"


def scaling_table(meas: dict) -> str:
    """Per size: ms of each named implementation and of the best CUDA rung, with x = coalesced time / its
    time; a skipped cell says why."""
    times = series(meas)
    up = speedups(times)
    notes = {(c["impl"], c["n"]): c["note"] for c in meas["cells"] if c.get("note")}
    names = list(NAMED[:4]) + [BEST, "torch.mm"]
    out = []
    for n in meas["sizes"]:
        row = [f"{n}^2"]
        for name in names:
            t = times.get(name, {}).get(n)
            if t is None:
                row.append(notes.get((name, n), "-"))
                continue
            x = up.get(name, {}).get(n)
            best = best_rung(meas, n)[0].replace("cuda ", "") + ": " if name == BEST else ""
            row.append(f"{best}{_ms(t)} ms" + ("" if x is None or name == BASE else f" (x{x:.2f})"))
        out.append(row)
    return tabulate(out, headers=["size"] + names, disable_numparse=True)


def claims_table(rows: list) -> str:
    """verdicts' rows as a Markdown table."""
    keys = ["#", "claim", "their setup and numbers", "measured here", "holds?"]
    return tabulate([[r[k] for k in keys] for r in rows], headers=keys, tablefmt="github", disable_numparse=True)


def scaling_chart(meas: dict, path: Path, meta: dict | None = None) -> Path:
    """Left: speedup over the coalesced kernel against size, one named line per implementation (the best CUDA
    rung's points named by rung). Right: TFLOP/s against size, the same lines."""
    plt = report._pyplot()
    meta = meta or {}
    times = series(meas)
    up = speedups(times)
    colors = {"cuda naive": "lightsteelblue", "cuda coalesced": "tab:cyan", "cuda tiled T=16": "tab:green",
              "cuda tiled T=32": "tab:olive", BEST: "tab:blue", "torch.mm": "dimgray"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.5))
    for name, color in colors.items():
        by = times.get(name, {})
        for ax, ys in ((left, up.get(name, {})), (right, {n: 2 * n ** 3 / (t * 1e-3) / 1e12 for n, t in by.items()})):
            ns = sorted(ys)
            if not ns:
                continue
            ax.plot(ns, [ys[n] for n in ns], marker="o", color=color, label=name)
            ax.annotate(name.replace("cuda ", ""), (ns[-1], ys[ns[-1]]), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=8, color=color)
            if name == BEST and ax is left:
                for n in ns:
                    ax.annotate(best_rung(meas, n)[0].replace("cuda ", ""), (n, ys[n]), xytext=(0, 7),
                                textcoords="offset points", ha="center", fontsize=7, color=color)
    from matplotlib.ticker import FuncFormatter
    for ax, label in ((left, f"speedup over {BASE} (its time / this time)"), (right, "TFLOP/s")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
        ax.set_xticks(meas["sizes"], [str(n) for n in meas["sizes"]])
        ax.set_xlim(min(meas["sizes"]) / 1.3, max(meas["sizes"]) * 2.2)
        ax.set_xlabel("N (N x N x N, fp32 IEEE)")
        ax.set_ylabel(label)
        ax.grid(which="major", alpha=0.3)
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    skipped = sorted({c["impl"].replace("cuda ", "") for c in meas["cells"] if c.get("note")})
    capped = f"; not run where a call would exceed {meas['cap_s']:g} s: {', '.join(skipped)}" if skipped else ""
    fig.suptitle(f"{meta.get('gpu', 'GPU')}: square fp32 products by size{capped}", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_scaling(meas: dict, claims: list, meta: dict, out_dir: Path) -> list:
    """scaling.json (measurements and verdicts), claims.md, scaling.png and RESULTS.md under out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "scaling.json").write_text(json.dumps({"meta": meta, "measurements": meas, "claims": claims}, indent=1))
    (out_dir / "claims.md").write_text(claims_table(claims) + "\n")
    chart = scaling_chart(meas, out_dir / "scaling.png", meta)
    page = report.write_page(out_dir, meta, [("Scaling (fp32 IEEE squares)", scaling_table(meas), "text"),
                                             ("The claims", claims_table(claims), "markdown")], [chart])
    return [out_dir / "scaling.json", out_dir / "claims.md", chart, page]


# ---- the preset ---------------------------------------------------------------------------------

def run(args, meta: dict) -> int:
    """Measures, prints the scaling table and the claims table; writes them under --out (write_scaling)."""
    count = sum(i.level == "thread" for i in impls.registry("fp32")) + 1
    meas = measure(SIZES, args.time_cap, args.rounds, Steps(len(SIZES) * count * args.rounds, "scaling"))
    traffic_path = Path(args.out) / "traffic.json" if args.out else None
    traffic_rows = json.loads(traffic_path.read_text())["rows"] if traffic_path and traffic_path.exists() else None
    rows = verdicts(meas, traffic_rows)
    print(f"\n{meta['gpu']}, torch {meta['torch']}, {meta['date']}; fp32 (IEEE) square products, "
          "device-time medians (common.device_ms)"
          + (f" of {args.rounds} interleaved rounds" if args.rounds > 1 else "")
          + f"; x = {BASE} time / this time; skipped where a call would take over {args.time_cap:g} s\n")
    print(scaling_table(meas))
    print("\n" + claims_table(rows))
    if args.out:
        for path in write_scaling(meas, rows, meta, Path(args.out)):
            print("wrote", path)
    return 0
