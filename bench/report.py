"""Tables (tabulate), CSV/JSON and PNG plots (matplotlib) of benchmark rows."""
import csv
import json
import math
from pathlib import Path

from tabulate import tabulate

COLUMNS = ["impl", "level", "tile", "shape", "ms", "TFLOP/s", "% torch.mm", "x naive", "model GB", "FLOP/B", "rel err"]
FP8_BASE_NAME = "_scaled_mm"  # what fp8 rows are compared with: torch._scaled_mm, same scales
FP8_BASE = f"% {FP8_BASE_NAME}"  # the fp8 table's "% torch.mm": torch._scaled_mm's time over the row's
# Each table's heading beyond its name.
TITLES = {"fp32": " (IEEE, TF32 off)", "tf32x3": " (torch.mm: IEEE SGEMM)",
          "fp8": " (e4m3 from quantize_fp8, b column-major, bf16 out; against torch._scaled_mm with the same scales; "
                 "rel err against float64 of the dequantized operands)"}
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
    columns = [FP8_BASE if c == "% torch.mm" and rows and all(r.get("precision") == "fp8" for r in rows) else c
               for c in COLUMNS]
    return tabulate(out, headers=columns + ([SPREAD] if rounds else []), disable_numparse=True)


def page_header(meta: dict) -> list:
    """The lines every RESULTS.md opens with: the GPU, date, versions and command of the one run it
    reports, how tritonmm picked its configs, and where the run's wall time went."""
    got = {key: meta.get(key, "?") for key in ("date", "torch", "triton", "python", "command")}
    lines = [f"# Benchmark results: {meta.get('gpu') or 'no GPU (the CPU run)'}", "",
             f"- Date: {got['date']}; torch {got['torch']}, triton {got['triton']}, Python {got['python']}",
             f"- Command: `{got['command']}`"]
    if meta.get("tritonmm_configs"):
        lines.append(f"- tritonmm's configs: {meta['tritonmm_configs']}")
    if meta.get("native_dispatch"):
        lines.append(f"- Native dispatch: {meta['native_dispatch']}")
    if meta.get("phases"):
        lines.append("- Wall time by phase: " + ", ".join(f"{name} {s:.0f} s" for name, s in meta["phases"].items()))
    return lines


def write_page(out_dir: Path, meta: dict, sections: list, images=()) -> Path:
    """Writes out_dir/RESULTS.md, replacing any earlier one: page_header, then each (title, body, kind) of
    sections, a "text" body fenced as preformatted and a "markdown" one as it is, then the images (paths
    beside the page). Returns its path."""
    lines = page_header(meta) + [""]
    for title, body, kind in sections:
        lines += [f"## {title}", ""] + (["```", body, "```"] if kind == "text" else [body]) + [""]
    lines += [f"![{p.stem}]({p.name})" for p in images]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "RESULTS.md"
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
    return path


def write(rows: list, meta: dict, out_dir: Path) -> list:
    """results.json, results.csv, the plots and RESULTS.md (write_page: one table per dtype) under out_dir;
    returns the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "results.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    with open(out_dir / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["impl"])
        writer.writeheader()
        writer.writerows(rows)
    images = plots(rows, meta, out_dir)
    sections = [("How it was measured", "\n".join(method_lines(meta)), "markdown")]
    sections += [(f"{precision}{TITLES.get(precision, '')}", table([r for r in rows if r["precision"] == precision]),
                  "text") for precision in dict.fromkeys(r["precision"] for r in rows)]
    page = write_page(out_dir, meta, sections, images)
    return [out_dir / "results.json", out_dir / "results.csv", *images, page]


def method_lines(meta: dict) -> list:
    """The product table's timing method and measured ceilings, as Markdown list items."""
    return ["- Timing: device-time medians (bench.common.device_ms: do_bench's loop, the L2 emptied by a read) "
            "after a warm-up run (builds, compiles and tuning excluded); inputs rotated when they fit in L2; "
            "relative error against float64.",
            f"- Measured ceilings: device-to-device copy {meta['copy_TBps']:.2f} TB/s; "
            "best torch.mm per dtype (fp8: torch._scaled_mm): " +
            ", ".join(f"{k} {v:.0f} TFLOP/s" for k, v in meta["peaks_tflops"].items() if v)]


def plots(rows: list, meta: dict, out_dir: Path) -> list:
    """ladder.png, tflops.png and (with a measured copy bandwidth) roofline.png under out_dir."""
    measured = [r for r in rows if r.get("tflops")]
    if not measured:
        return []
    written = [ladder_chart(measured, out_dir / "ladder.png", meta),
               tflops_chart(measured, out_dir / "tflops.png", meta)]
    if meta.get("copy_TBps"):
        written.append(roofline_chart(measured, out_dir / "roofline.png", meta))
    return written


LEVEL_COLORS = {"thread": "tab:blue", "gluon": "tab:green", "block": "tab:orange", "library": "dimgray"}
LEVEL_NAMES = {"thread": "CUDA ladder (thread level)", "gluon": "Gluon (warp groups written out, Triton >= 3.8)",
               "block": "tritonmm (block level, Triton)", "library": "torch.mm (cuBLAS)"}


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _flops(r):
    return r["M"] * r["N"] * r["K"]


def chart_shape(rows: list, precision: str | None = None) -> str | None:
    """The shape the one-shape charts show: the largest square shape (M == N == K) among the measured rows of
    precision (fp32 by default, else the first precision present) that has CUDA-ladder rows, if any do;
    without a square shape, the largest."""
    measured = [r for r in rows if r.get("tflops")]
    if precision is None:
        precisions = [r["precision"] for r in measured]
        precision = "fp32" if "fp32" in precisions else (precisions[0] if precisions else None)
    sub = [r for r in measured if r["precision"] == precision]
    if any(r["level"] == "thread" for r in sub):
        ladder_shapes = {r["shape"] for r in sub if r["level"] == "thread"}
        sub = [r for r in sub if r["shape"] in ladder_shapes]
    if not sub:
        return None
    square = [r for r in sub if r["M"] == r["N"] == r["K"]]
    return max(square or sub, key=_flops)["shape"]


def _pct(r, rows):
    """% of torch.mm at r's precision and shape: the row's own column, else worked out from the rows."""
    if r.get("pct_torch") is not None:
        return r["pct_torch"]
    ref = next((t for t in rows if t["impl"] == "torch.mm" and t["precision"] == r["precision"]
                and t["shape"] == r["shape"] and t.get("tflops")), None)
    return 100.0 * r["tflops"] / ref["tflops"] if ref else None


def _tf(v):
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def _bar_text(r, rows):
    pct = _pct(r, rows)
    base = FP8_BASE_NAME if r["precision"] == "fp8" else "cuBLAS"
    return f"{_tf(r['tflops'])} TFLOP/s" + ("" if pct is None else f", {pct:.0f}% of {base}")


def _planned(r) -> bool:
    """Whether r is tritonmm as its planner runs it (bench.impls.PLANNED: "tritonmm (autotuned)" or, untuned,
    "tritonmm (default config)"), not a pinned tile ("tritonmm 64x64x32")."""
    return r["impl"].startswith("tritonmm (")


def _bar_name(r):
    if r["impl"] == "torch.mm":
        return "torch.mm (cuBLAS)"
    if _planned(r) and r.get("tile"):
        return f"{r['impl']}\npicked {r['tile']}"
    return r["impl"]


def _hbars(ax, rows, labels, texts, xmax, slots=None, fontsize=9, values=None, xlabel="TFLOP/s"):
    """Horizontal bars, top to bottom in the order given, each with its text at the end of the bar:
    inside (white) where the bar is long, outside where it is short. Bar lengths are values (default:
    each row's TFLOP/s)."""
    ys = list(range(len(rows)))
    values = values or [r["tflops"] for r in rows]
    ax.barh(ys, values, 0.7, color=[LEVEL_COLORS.get(r["level"], "gray") for r in rows])
    for y, v, text in zip(ys, values, texts):
        inside = v > 0.55 * xmax
        ax.text(v - 0.01 * xmax if inside else v + 0.01 * xmax, y, text, va="center",
                ha="right" if inside else "left", color="white" if inside else "black", fontsize=fontsize)
    ax.set_yticks(ys, labels, fontsize=fontsize)
    ax.set_ylim((slots or len(rows)) - 0.5, -0.5)
    ax.set_xlim(0, xmax)
    ax.set_xlabel(xlabel, fontsize=fontsize + 1)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def ladder_step(impl: str) -> int | None:
    """The CUDA ladder's step number of a bench row's impl ("cuda tiled T=32" -> 3), None for other rows."""
    from cuda_reference import KERNELS
    words = impl.split()
    return KERNELS[words[1]].step if len(words) > 1 and words[0] == "cuda" and words[1] in KERNELS else None


def ladder_bars(rows: list, precision: str, shape: str) -> list:
    """One ladder panel's bars at (precision, shape): each step of the CUDA ladder that has rows, in step
    order, as its fastest variant; then the fastest Gluon schedule where it ran, tritonmm as its planner runs
    it, then torch.mm."""
    sub = [r for r in rows if r.get("tflops") and r["precision"] == precision and r["shape"] == shape]
    best = {}
    for r in sub:
        step = ladder_step(r["impl"]) if r["level"] == "thread" else None
        if step is not None and (step not in best or r["tflops"] > best[step]["tflops"]):
            best[step] = r
    gluon = sorted((r for r in sub if r["level"] == "gluon"), key=lambda r: -r["tflops"])[:1]
    return ([best[s] for s in sorted(best)] + gluon + [r for r in sub if _planned(r)][:1] +
            [r for r in sub if r["level"] == "library"][:1])


def ladder_chart(rows: list, path: Path, meta: dict | None = None, shape: str | None = None) -> Path:
    """The CUDA ladder as % of cuBLAS, one panel per precision that has ladder rows (fp32 first, then the
    16-bit ones), each at chart_shape's shape for it unless shape is given: one bar per step, its fastest
    variant (named), then tritonmm as planned and torch.mm, every bar labelled with TFLOP/s and % of cuBLAS.
    Without ladder rows, one panel of the first precision's block-level rows (the tile sweep) and torch.mm."""
    plt = _pyplot()
    meta = meta or {}
    measured = [r for r in rows if r.get("tflops")]
    order = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 3}
    precisions = sorted({r["precision"] for r in measured if r["level"] == "thread"}, key=lambda p: order.get(p, 9))
    panels = []
    for prec in precisions:
        at = shape or chart_shape(measured, prec)
        bars = ladder_bars(measured, prec, at)
        names = [f"step {ladder_step(r['impl'])}: {r['impl'].removeprefix('cuda ')}" if r["level"] == "thread"
                 else _bar_name(r) for r in bars]
        panels.append((f"{prec}{TITLES.get(prec, '')}, {at}", bars, names))
    if not panels and measured:
        prec = measured[0]["precision"]
        at = shape or chart_shape(measured, prec)
        sub = [r for r in measured if r["precision"] == prec and r["shape"] == at]
        block = [r for r in sub if r["level"] == "block"]
        bars = [r for r in block if not _planned(r)] + [r for r in block if _planned(r)] + \
               [r for r in sub if r["level"] == "library"][:1]
        panels.append((f"{prec}{TITLES.get(prec, '')}, {at}: no CUDA ladder rows", bars, [_bar_name(r) for r in bars]))
    slots = max([len(p[1]) for p in panels] or [1])
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(7.5 * max(1, len(panels)), 1.8 + 0.4 * slots),
                             squeeze=False)
    for ax, (title, bars, names) in zip(axes[0], panels):
        pcts = [_pct(r, measured) or 0.0 for r in bars]
        _hbars(ax, bars, names, [_bar_text(r, measured) for r in bars], 1.12 * max(pcts + [100.0]), slots,
               fontsize=8, values=pcts, xlabel="% of cuBLAS (torch.mm)")
        ax.axvline(100, color="dimgray", linewidth=0.8, linestyle="--")
        ax.set_title(title, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=LEVEL_COLORS[k]) for k in LEVEL_NAMES]
    fig.legend(handles, list(LEVEL_NAMES.values()), loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(f"{meta.get('gpu', 'GPU')}: the CUDA ladder step by step, each step's fastest variant",
                 fontsize=12)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _headline(sub: list) -> list:
    """At most five series for one precision: (name, rows by shape). torch.mm, tritonmm as planned (autotuned
    or default config), the best CUDA rung of each shape, the best Gluon schedule where one ran and the naive rung; for fp8, one series per implementation and scale kind."""
    shapes = list(dict.fromkeys(r["shape"] for r in sub))

    def pick(pred, best=False):
        out = {}
        for s in shapes:
            cands = [r for r in sub if r["shape"] == s and pred(r)]
            if cands:
                out[s] = max(cands, key=lambda r: r["tflops"]) if best else cands[0]
        return out

    # fp8 has none of those four. Asked by precision, not by a missing torch.mm row: --impl can leave that
    # out of any dtype, which still wants the headline series.
    if sub and sub[0]["precision"] == "fp8":
        return [(name, pick(lambda r, name=name: r["impl"] == name)) for name in dict.fromkeys(r["impl"] for r in sub)]
    planned = next((r["impl"] for r in sub if _planned(r)), "tritonmm (autotuned)")
    series = [("torch.mm (cuBLAS)", pick(lambda r: r["impl"] == "torch.mm")),
              (planned, pick(_planned)),
              ("best CUDA rung", pick(lambda r: r["level"] == "thread", best=True)),
              ("best Gluon schedule", pick(lambda r: r["level"] == "gluon", best=True)),
              ("cuda naive", pick(lambda r: r["impl"] == "cuda naive"))]
    return [(name, by_shape) for name, by_shape in series if by_shape]


def tflops_chart(rows: list, path: Path, meta: dict | None = None) -> Path:
    """One panel per precision, horizontal bars grouped by shape: torch.mm, tritonmm (autotuned), the best CUDA
    rung (named on its bar) and the naive rung (fp8: each implementation and scale kind); every bar labelled
    with TFLOP/s and % of cuBLAS (fp8: of _scaled_mm)."""
    plt = _pyplot()
    meta = meta or {}
    measured = [r for r in rows if r.get("tflops")]
    precisions = list(dict.fromkeys(r["precision"] for r in measured))
    colors = {"torch.mm (cuBLAS)": "dimgray", "tritonmm (autotuned)": "tab:orange",
              "tritonmm (default config)": "tab:orange", "best CUDA rung": "tab:blue", "cuda naive": "lightsteelblue",
              "best Gluon schedule": "tab:green"}
    panels = [(p, _headline([r for r in measured if r["precision"] == p])) for p in precisions]
    heights = [max(1, len({s for _, by in series for s in by})) * (len(series) + 0.8) for _, series in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, 1.2 + 0.3 * sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (prec, series) in zip(axes[:, 0], panels):
        shapes = list(dict.fromkeys(s for _, by in series for s in by))
        n = len(series)
        xmax = 1.08 * max(r["tflops"] for _, by in series for r in by.values())
        for i, (name, by_shape) in enumerate(series):
            ys = [j * (n + 0.8) + i for j, s in enumerate(shapes) if s in by_shape]
            bars = [by_shape[s] for s in shapes if s in by_shape]
            ax.barh(ys, [r["tflops"] for r in bars], 0.85, color=colors.get(name, plt.cm.tab10(i)), label=name)
            for y, r in zip(ys, bars):
                text = _bar_text(r, measured)
                if name in ("best CUDA rung", "best Gluon schedule"):
                    text = f"{r['impl']}: {text}"
                inside = r["tflops"] > 0.6 * xmax
                ax.text(r["tflops"] - 0.005 * xmax if inside else r["tflops"] + 0.005 * xmax, y, text,
                        va="center", ha="right" if inside else "left", color="white" if inside else "black",
                        fontsize=8)
        ax.set_yticks([j * (n + 0.8) + (n - 1) / 2 for j in range(len(shapes))], shapes, fontsize=9)
        ax.set_ylim(len(shapes) * (n + 0.8) - 0.8 - 0.5, -0.5)
        ax.set_xlim(0, xmax)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.set_xlabel("TFLOP/s", fontsize=9)
        ax.set_ylabel("M x N x K", fontsize=9)
        ax.set_title(f"{prec}{TITLES.get(prec, '')}", fontsize=11, loc="left")
        ax.legend(fontsize=8, loc="lower right", framealpha=0.9)
    fig.suptitle(f"{meta.get('gpu', 'GPU')}: TFLOP/s per shape, headline implementations", fontsize=13)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _short(impl: str) -> str:
    if impl.startswith("cuda "):
        return impl[len("cuda "):]
    if impl.startswith("tritonmm "):
        return "triton " + impl[len("tritonmm "):].strip("()")
    return impl


def _place_labels(ax, points: list, fontsize: float = 8):
    """Names each point (x, y, text, color). Points drawn on the same spot in the same colour share one label.
    A crowd of three or more points gets a column of labels beside it, in the points' vertical order, with
    leader lines; any other point its label at the nearest free slot right or left of it, stacked up or down
    with a leader line where other points, labels or the legend take the space."""
    from matplotlib.transforms import Bbox
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axbox = ax.get_window_extent(renderer)
    pt = fig.dpi / 72  # pixels per point
    merged = {}
    for x, y, text, color in points:
        cx, cy = ax.transData.transform((x, y))
        key = (round(cx / 2), round(cy / 2), color)
        if key in merged:
            merged[key][2].append(text)
        else:
            merged[key] = [x, y, [text], color, cx, cy]
    spots = [(x, y, " = ".join(texts), color, cx, cy) for x, y, texts, color, cx, cy in merged.values()]
    taken = [Bbox.from_bounds(cx - 5 * pt, cy - 5 * pt, 10 * pt, 10 * pt) for *_, cx, cy in spots]
    legend = ax.get_legend()
    if legend is not None:
        taken.append(legend.get_window_extent(renderer))

    def size(text):
        probe = ax.text(0, 0, text, fontsize=fontsize)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        return bb.width + 3 * pt, bb.height * 1.15

    def free(box):
        return (box.x0 >= axbox.x0 and box.x1 <= axbox.x1 and box.y0 >= axbox.y0 and box.y1 <= axbox.y1
                and not any(box.overlaps(t) for t in taken))

    def put(spot, side, box, leader):
        x, y, text, color, cx, cy = spot
        taken.append(box)
        ax.annotate(text, (x, y), xytext=((box.x0 if side > 0 else box.x1) - cx, (box.y0 + box.y1) / 2 - cy),
                    textcoords="offset pixels", ha="left" if side > 0 else "right", va="center",
                    fontsize=fontsize, color=color, zorder=4,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8),
                    arrowprops=dict(arrowstyle="-", lw=0.6, color=color, shrinkA=0, shrinkB=3) if leader else None)

    # crowds: points linked when closer than a label's height and a few markers' widths
    parent = list(range(len(spots)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    line = size("Ag")[1]
    for i in range(len(spots)):
        for j in range(i):
            if abs(spots[i][4] - spots[j][4]) < 24 * pt and abs(spots[i][5] - spots[j][5]) < 1.2 * line:
                parent[root(i)] = root(j)
    crowds = {}
    for i in range(len(spots)):
        crowds.setdefault(root(i), []).append(i)
    placed = set()
    for members in sorted(crowds.values(), key=len, reverse=True):
        if len(members) < 3:
            break
        members.sort(key=lambda i: -spots[i][5])
        sizes = [size(spots[i][2]) for i in members]
        width, height = max(w for w, _ in sizes), sum(h for _, h in sizes)
        xs = [spots[i][4] for i in members]
        ymid = sum(spots[i][5] for i in members) / len(members)
        for k in sorted(range(-30, 31), key=abs):
            for side in (1, -1):
                x0 = max(xs) + 24 * pt if side > 0 else min(xs) - 24 * pt - width
                col = Bbox.from_bounds(x0, ymid - height / 2 + k * line / 2, width, height)
                if free(col):
                    break
            else:
                continue
            break
        top = col.y1
        for i, (w, h) in zip(members, sizes):
            box = Bbox.from_bounds(col.x0 if side > 0 else col.x1 - w, top - h, w, h)
            put(spots[i], side, box, True)
            top -= h
            placed.add(i)
    for i in sorted(set(range(len(spots))) - placed, key=lambda i: (-spots[i][5], spots[i][4])):
        cx, cy = spots[i][4], spots[i][5]
        w, h = size(spots[i][2])
        prefer = 1 if cx + 8 * pt + w < axbox.x1 else -1
        choice = None
        for k in sorted(range(-20, 21), key=abs):
            for side in (prefer, -prefer):
                x0 = cx + 6 * pt if side > 0 else cx - 6 * pt - w
                box = Bbox.from_bounds(x0, cy + k * h - h / 2, w, h)
                if free(box):
                    choice = (side, k, box)
                    break
            if choice:
                break
        if choice is None:  # nowhere free: on the point's right, overlapping
            choice = (1, 0, Bbox.from_bounds(cx + 6 * pt, cy - h / 2, w, h))
        side, k, box = choice
        put(spots[i], side, box, k != 0)


def roofline_chart(rows: list, path: Path, meta: dict) -> Path:
    """Measured TFLOP/s against modeled arithmetic intensity at one shape per precision (chart_shape's), under
    roofs of the measured copy bandwidth and the best torch.mm; every point named."""
    plt = _pyplot()
    measured = [r for r in rows if r.get("tflops")]
    bw = meta["copy_TBps"]
    precisions = list(dict.fromkeys(r["precision"] for r in measured))
    prec_colors = dict(zip(precisions, ["tab:blue", "tab:red", "tab:green", "tab:purple", "tab:brown", "tab:olive"]))
    markers = {"thread": "o", "gluon": "^", "block": "s"}
    fig, ax = plt.subplots(figsize=(13, 8))
    points, shapes, xs_all = [], {}, []
    for prec in precisions:
        shapes[prec] = chart_shape(measured, prec)
        sub = [r for r in measured if r["precision"] == prec and r["shape"] == shapes[prec] and r.get("intensity")]
        for level in markers:
            lv = [r for r in sub if r["level"] == level]
            if not lv:
                continue
            name = {"thread": "CUDA ladder", "gluon": "Gluon"}.get(level, "tritonmm")
            ax.scatter([r["intensity"] for r in lv], [r["tflops"] for r in lv], s=28, marker=markers[level],
                       color=prec_colors[prec], label=f"{prec} {name}", zorder=3,
                       facecolors="none" if level == "block" else None)
            points += [(r["intensity"], r["tflops"], _short(r["impl"]), prec_colors[prec]) for r in lv]
            xs_all += [r["intensity"] for r in lv]
    lo = 2 ** (math.floor(math.log2(min(xs_all or [1]))) - 1)
    hi = 2 ** (math.ceil(math.log2(max(xs_all or [1]))) + 3)
    peaks = {p: v for p, v in meta.get("peaks_tflops", {}).items() if v and p in precisions}
    ridge = max([v / bw for v in peaks.values()] + [lo])
    ax.plot([lo, ridge], [lo * bw, ridge * bw], lw=1.2, color="black", alpha=0.6,
            label=f"bandwidth roof: copy {bw:.2f} TB/s measured")
    for prec, peak in peaks.items():
        ax.plot([peak / bw, hi], [peak, peak], lw=1.2, color=prec_colors[prec], alpha=0.7,
                label=f"{prec} compute roof: best {'torch._scaled_mm' if prec == 'fp8' else 'torch.mm'}, "
                      f"{peak:.0f} TFLOP/s")
    ys = [p[1] for p in points] + [v for v in meta.get("peaks_tflops", {}).values() if v]  # None: no baseline row
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(ys or [1]) / 2, max(ys or [1]) * 2)
    ax.set_xlabel("modeled arithmetic intensity (FLOP per byte of global traffic, tile model)", fontsize=10)
    ax.set_ylabel("TFLOP/s (measured)", fontsize=10)
    seen = {s for s in shapes.values() if s}
    where = (f"M x N x K = {seen.pop()}" if len(seen) == 1 else
             ", ".join(f"{p} at {s}" for p, s in shapes.items() if s))
    ax.set_title(f"{meta.get('gpu', 'GPU')}: roofline on modeled traffic, {where}\n"
                 "torch.mm has no tile model, so it appears only as the compute roofs; points above the bandwidth "
                 "roof get reuse from L2 that the model leaves out", fontsize=11)
    ax.grid(which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right", framealpha=0.9)
    fig.tight_layout()
    _place_labels(ax, points)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


SWEEP_COLUMNS = ["dtype", "shape", "layout", "kind", "class", "torch graph us", "tritonmm graph us", "x graph",
                 "torch eager us", "tritonmm eager us", "x eager", "tritonmm path config", "rel err"]


def sweep_table(rows: list) -> str:
    """The sweep's rows; "x" columns are torch time / tritonmm time (above 1: tritonmm faster); '-'
    where there is no torch time (fp8 shapes torch._scaled_mm refuses), or no kind or class (rows
    recorded before the sweep kept them)."""
    out = [[r["dtype"], r["shape"], r["layout"], r.get("kind", "-"), r.get("cls", "-"),
            _fmt(r["torch_graph_us"], ".1f"), f"{r['tritonmm_graph_us']:.1f}", _fmt(r["ratio_graph"], ".2f"),
            _fmt(r["torch_eager_us"], ".1f"), f"{r['tritonmm_eager_us']:.1f}", _fmt(r["ratio_eager"], ".2f"),
            r["config"], _fmt(r["rel_err"], ".1e")] for r in rows]
    return tabulate(out, headers=SWEEP_COLUMNS, disable_numparse=True)


def write_sweep(rows: list, summary: list, meta: dict, out_dir: Path) -> list:
    """sweep.json, sweep.csv, sweep.png and RESULTS.md (the summary, then the table) under out_dir; returns
    the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "sweep.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=1))
    with open(out_dir / "sweep.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot = sweep_plot(rows, meta, out_dir / "sweep.png")
    page = write_page(out_dir, meta, [("Summary", "\n".join(summary), "text"),
                                      ("Every shape", sweep_table(rows), "text")], [plot])
    return [out_dir / "sweep.json", out_dir / "sweep.csv", plot, page]


def sweep_plot(rows: list, meta: dict, path: Path) -> Path:
    """Bars of the graph ratio per shape, one series per dtype, every shape named on the axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = list(dict.fromkeys((r["shape"], r["layout"]) for r in rows))
    dtypes = list(dict.fromkeys(r["dtype"] for r in rows))
    ratio = {(r["dtype"], r["shape"], r["layout"]): r["ratio_graph"] or 0 for r in rows}  # no bar: no torch time
    width = 0.8 / len(dtypes)
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(shapes)), 5.5))
    for i, dtype in enumerate(dtypes):
        ax.bar([x + i * width for x in range(len(shapes))], [ratio.get((dtype, *s), 0) for s in shapes], width,
               label=dtype, color=plt.cm.tab10(i))
    ax.axhline(1.0, color="black", lw=1, ls="--", label="torch.mm (fp8: torch._scaled_mm)" if "fp8" in dtypes
               else "torch.mm")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))], [f"{s} {lay}" for s, lay in shapes],
                  rotation=90, fontsize=7)
    ax.set_ylabel(("torch time" if "fp8" in dtypes else "torch.mm time") + " / tritonmm time (CUDA graph)")
    ax.set_title(f"tritonmm against {'torch' if 'fp8' in dtypes else 'torch.mm'}, kernel time per shape: above 1, "
                 f"tritonmm is faster "
                 f"({meta.get('gpu', '')})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- measured traffic (python -m bench --traffic) ------------------------------------------------

TRAFFIC_COLUMNS = ["impl", "path", "tile", "kernels", "model GB", "L1 req GB", "L1 hit %", "L2 read GB",
                   "DRAM read GB", "L2/model", "DRAM/model", "DRAM/min", "ms (ncu)", "rel err"]


def _gb(v):
    return _fmt(v and v / 1e9, ".3f" if v and v < 1e9 else ".2f")


def traffic_table(rows: list) -> str:
    """bench.traffic.traffic_row rows: modeled reads, measured reads at L1 (requested), L2 (requested by the
    SMs) and DRAM, and the ratios; a row's note stands in for its numbers."""
    out = []
    for r in rows:
        tile = "cuBLAS" if r["tile"] is None else "x".join(map(str, r["tile"]))
        cells = [r["impl"], r.get("path") or "-", tile, str(r.get("kernels", "-"))]
        if r.get("note") and not r.get("kernels"):
            out.append(cells + ["-"] * (len(TRAFFIC_COLUMNS) - len(cells) - 1) + [r["note"]])
            continue
        out.append(cells + [_gb(r["model_read_bytes"]), _gb(r["l1_req_bytes"]), _fmt(r["l1_hit_pct"], ".0f"),
                            _gb(r["l2_read_bytes"]), _gb(r["dram_read_bytes"]), _fmt(r["l2_x_model"], ".2f"),
                            _fmt(r["dram_x_model"], ".2f"), _fmt(r["dram_x_min"], ".1f"), _fmt(r["time_ms"], ".3f"),
                            _fmt(r.get("rel_err"), ".1e") + (f" ({r['note']})" if r.get("note") else "")])
    return tabulate(out, headers=TRAFFIC_COLUMNS, disable_numparse=True)


def write_traffic(rows: list, meta: dict, out_dir: Path) -> list:
    """traffic.json, traffic.csv, one traffic chart per (dtype, shape) and RESULTS.md (a table per (dtype, shape))
    under out_dir; returns the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "traffic.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    with open(out_dir / "traffic.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    charts = [traffic_chart([r for r in rows if (r["dtype"], r["shape"]) == key],
                            out_dir / f"traffic_{key[0]}_{key[1]}.png", meta)
              for key in dict.fromkeys((r["dtype"], r["shape"]) for r in rows)]
    tables = [(f"{dtype} {shape}", traffic_table([r for r in rows if (r["dtype"], r["shape"]) == (dtype, shape)]),
               "text") for dtype, shape in dict.fromkeys((r["dtype"], r["shape"]) for r in rows)]
    page = write_page(out_dir, meta, tables, charts)
    return [out_dir / "traffic.json", out_dir / "traffic.csv", *charts, page]


TRAFFIC_SERIES = [("model_read_bytes", "model (tile reads)", "lightgray"),
                  ("l2_read_bytes", "L2 reads requested by the SMs", "tab:blue"),
                  ("dram_read_bytes", "DRAM (HBM) reads", "tab:red")]


def traffic_chart(rows: list, path: Path, meta: dict | None = None) -> Path:
    """For one dtype and shape: per kernel, grouped bars of modeled, L2 and DRAM read bytes on a log axis,
    every bar labelled; the CUDA ladder in the left panel, Gluon's schedules where they ran, tritonmm in the
    right, cuBLAS in each; a line at the compulsory minimum (A and B read once)."""
    plt = _pyplot()
    meta = meta or {}
    rows = [r for r in rows if r.get("kernels")]
    lib = [r for r in rows if r["level"] == "library"]
    panels = [(title, sub + lib) for title, sub in
              (("CUDA ladder (thread-level tiles)", [r for r in rows if r["level"] == "thread"]),
               ("Gluon (warp groups written out)", [r for r in rows if r["level"] == "gluon"]),
               ("tritonmm (block-level tiles), pinned", [r for r in rows if r["level"] == "block"]))
              if sub]
    if not panels:
        panels = [("cuBLAS", lib)]
    slots = max(len(bars) for _, bars in panels)
    values = [r[key] for r in rows for key, *_ in TRAFFIC_SERIES if r.get(key)]
    floor = rows[0]["min_read_bytes"] if rows else 1
    lo, hi = min(values + [floor]) / 3, max(values + [floor]) * 8
    height = 2.0 + 0.75 * slots
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), height), squeeze=False)
    width = 0.27
    for ax, (title, bars) in zip(axes[0], panels):
        for i, (key, label, color) in enumerate(TRAFFIC_SERIES):
            ys = [j + (i - 1) * width for j in range(len(bars))]
            xs = [r.get(key) or 0 for r in bars]
            ax.barh(ys, [max(x - lo, 0) for x in xs], width * 0.95, left=lo, color=color, label=label)  # ends at x
            for y, x in zip(ys, xs):
                text = f"{x / 1e9:.3g} GB" if x else "no model" if key == "model_read_bytes" else "not measured"
                ax.text(x * 1.08 if x else lo * 1.1, y, text, va="center", fontsize=7)
        ax.axvline(floor, color="black", lw=1, ls="--", label=f"A and B read once: {floor / 1e9:.3g} GB")
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        names = [r["impl"] + (f" ({r['path']})" if r.get("path") and r["path"] not in r["impl"] else "") for r in bars]
        ax.set_yticks(range(len(bars)), names, fontsize=8)
        ax.set_ylim(slots - 0.5, -0.5)
        ax.set_xlabel("bytes read (log scale)", fontsize=9)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", which="major", alpha=0.3)
        ax.set_axisbelow(True)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    r0 = rows[0] if rows else {"dtype": "?", "shape": "?"}
    fig.suptitle(f"{meta.get('gpu', 'GPU')}: bytes read, {r0['dtype']} {r0['shape']} "
                 f"(Nsight Compute, caches flushed before each kernel)", fontsize=12)
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1))  # 0.4 inch for the legend
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
