"""Tables (tabulate), CSV/JSON and PNG plots (matplotlib) of benchmark rows."""
import csv
import json
from pathlib import Path

from tabulate import tabulate

COLUMNS = ["impl", "level", "tile", "shape", "ms", "TFLOP/s", "% torch.mm", "x naive", "model GB", "FLOP/B", "rel err"]
SPREAD = "spread %"  # (slowest - fastest round) / median, shown when rows were timed in several rounds


def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(rows: list) -> str:
    rounds = any(r.get("spread_pct") is not None for r in rows)
    out = []
    for r in rows:
        out.append([r["impl"], r["level"], r["tile"], r["shape"], r.get("note") or _fmt(r["ms"], ".3f"),
                    _fmt(r["tflops"], ".1f"), _fmt(r["pct_torch"], ".0f"), _fmt(r["x_naive"], ".1f"),
                    _fmt(r["model_bytes"] and r["model_bytes"] / 1e9, ".2f"), _fmt(r["intensity"], ".0f"),
                    _fmt(r["rel_err"], ".1e")] + ([_fmt(r.get("spread_pct"), ".1f")] if rounds else []))
    return tabulate(out, headers=COLUMNS + ([SPREAD] if rounds else []), disable_numparse=True)


def markdown(rows: list, meta: dict, images: list) -> str:
    """A results page: where and how it was measured, one table per dtype, the plots."""
    lines = [f"# Benchmark results: {meta['gpu']}", "",
             f"- Date: {meta['date']}; torch {meta['torch']}, triton {meta['triton']}, Python {meta['python']}",
             f"- Command: `{meta['command']}`",
             f"- Timing: triton.testing.do_bench medians after a warm-up run (builds, compiles and tuning "
             f"excluded); inputs rotated when they fit in L2; relative error against float64.",
             f"- Measured ceilings: device-to-device copy {meta['copy_TBps']:.2f} TB/s; best torch.mm per dtype: " +
             ", ".join(f"{k} {v:.0f} TFLOP/s" for k, v in meta["peaks_tflops"].items() if v), ""]
    for precision in dict.fromkeys(r["precision"] for r in rows):
        title = " (IEEE, TF32 off)" if precision == "fp32" else ""
        lines += [f"## {precision}{title}", "", "```", table([r for r in rows if r["precision"] == precision]),
                  "```", ""]
    lines += [f"![{p.stem}]({p.name})" for p in images]
    return "\n".join(lines) + "\n"


def write(rows: list, meta: dict, out_dir: Path) -> list:
    """results.json, results.csv, the plots and RESULTS.md under out_dir; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    with open(out_dir / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["impl"])
        writer.writeheader()
        writer.writerows(rows)
    images = plots(rows, meta, out_dir)
    (out_dir / "RESULTS.md").write_text(markdown(rows, meta, images))
    return [out_dir / "results.json", out_dir / "results.csv", *images, out_dir / "RESULTS.md"]


def plots(rows: list, meta: dict, out_dir: Path) -> list:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    measured = [r for r in rows if r["tflops"]]
    precisions = sorted({r["precision"] for r in measured})
    fig, axes = plt.subplots(len(precisions), 1, figsize=(12, 3.6 * len(precisions)), squeeze=False)
    for ax, prec in zip(axes[:, 0], precisions):
        sub = [r for r in measured if r["precision"] == prec]
        shapes = list(dict.fromkeys(r["shape"] for r in sub))
        impls = list(dict.fromkeys(r["impl"] for r in sub))
        width = 0.8 / len(impls)
        for i, impl in enumerate(impls):
            ys = [next((r["tflops"] for r in sub if r["impl"] == impl and r["shape"] == s), 0) for s in shapes]
            ax.bar([x + i * width for x in range(len(shapes))], ys, width, label=impl, color=plt.cm.tab20(i % 20))
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))], shapes, rotation=20, fontsize=7)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{prec}: TFLOP/s per implementation and shape ({meta.get('gpu', '')})", fontsize=9)
        ax.legend(fontsize=6, ncol=4)
    fig.tight_layout()
    fig.savefig(out_dir / "tflops.png", dpi=110)
    written.append(out_dir / "tflops.png")

    bw = meta.get("copy_TBps")
    if bw:
        fig, ax = plt.subplots(figsize=(8, 5.5))
        xs = [2 ** e for e in range(-2, 14)]
        for prec in precisions:
            sub = [r for r in measured if r["precision"] == prec and r["intensity"]]
            peak = meta["peaks_tflops"].get(prec)
            if peak:
                ax.plot(xs, [min(peak, x * bw) for x in xs], lw=1, label=f"{prec} roof (torch.mm peak {peak:.0f})")
            ax.scatter([r["intensity"] for r in sub], [r["tflops"] for r in sub], s=12, label=f"{prec} measured")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("modeled arithmetic intensity (FLOP per byte of global traffic)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"Roofline on modeled traffic: copy {bw:.2f} TB/s measured, peaks = best torch.mm seen;\n"
                     "points above a roof get reuse from L2 that the tile model leaves out", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / "roofline.png", dpi=110)
        written.append(out_dir / "roofline.png")
    return written


SWEEP_COLUMNS = ["dtype", "shape", "layout", "torch graph us", "tritonmm graph us", "x graph", "torch eager us",
                 "tritonmm eager us", "x eager", "tritonmm path config", "rel err"]


def sweep_table(rows: list) -> str:
    """The sweep's rows; "x" columns are torch time / tritonmm time (above 1: tritonmm faster)."""
    out = [[r["dtype"], r["shape"], r["layout"], f"{r['torch_graph_us']:.1f}", f"{r['tritonmm_graph_us']:.1f}",
            f"{r['ratio_graph']:.2f}", f"{r['torch_eager_us']:.1f}", f"{r['tritonmm_eager_us']:.1f}",
            f"{r['ratio_eager']:.2f}", r["config"], _fmt(r["rel_err"], ".1e")] for r in rows]
    return tabulate(out, headers=SWEEP_COLUMNS, disable_numparse=True)


def write_sweep(rows: list, summary: list, meta: dict, out_dir: Path) -> list:
    """sweep.json, sweep.csv and sweep.png under out_dir; returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "sweep.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1))
    with open(out_dir / "sweep.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return [out_dir / "sweep.json", out_dir / "sweep.csv", sweep_plot(rows, meta, out_dir / "sweep.png")]


def sweep_plot(rows: list, meta: dict, path: Path) -> Path:
    """Bars of the graph ratio per shape, one series per dtype, every shape named on the axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = list(dict.fromkeys((r["shape"], r["layout"]) for r in rows))
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    ratio = {(r["dtype"], r["shape"], r["layout"]): r["ratio_graph"] for r in rows}
    width = 0.8 / len(dtypes)
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(shapes)), 5.5))
    for i, dtype in enumerate(dtypes):
        ax.bar([x + i * width for x in range(len(shapes))], [ratio.get((dtype, *s), 0) for s in shapes], width,
               label=dtype, color=plt.cm.tab10(i))
    ax.axhline(1.0, color="black", lw=1, ls="--", label="torch.mm")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))], [f"{s} {lay}" for s, lay in shapes],
                  rotation=90, fontsize=7)
    ax.set_ylabel("torch.mm time / tritonmm time (CUDA graph)")
    ax.set_title(f"tritonmm against torch.mm, kernel time per shape: above 1, tritonmm is faster "
                 f"({meta.get('gpu', '')})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
