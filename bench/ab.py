"""python -m bench.ab: the planner as shipped against the planner with some thresholds changed, on a fresh draw.

    python -m bench.ab --set gluon_wide_min_macs=inf --sizes 1000-2500 --draw 10 --changed 12 --seed 1503
    python -m bench.ab --set stream_model=false --rows 2-64 --sizes 4096-14336 --draw 24 --seed 1801   # decode
    python -m bench.ab --set gluon_wide_row_fill=0 --rows 128-400 --sizes 4096-16896 --draw 0 --changed 12 --seed 1901
    python -m bench.ab --set batch_slice_min_fill=1 --batched --draw 12 --changed 12 --seed 2601

A rule is kept where it helps products it was not fitted on, so it is checked here on products drawn with a
seed not used before. --draw products of sizes uniform in --sizes (every other one's sizes snapped to multiples
of 8, as most weights and activations are; the rest of any size); then --changed more whose plan the changed
thresholds alter (planner.chosen in a CUDA graph differs), M and N from --sizes' range widened by a
thousand, K log-uniform in 256-4096 (--k), multiples of 8 (--unaligned: any sizes). Each is NN or x @ W.T (NT),
bf16 or fp16, drawn; with --dtype tf32x3, float32 in tritonmm's tf32x3 against torch.mm's IEEE SGEMM (--dtype
fp32: in IEEE precision, against the same). --rows draws
decode-like products instead (draw_rows; the changed ones too), gives each way's share of the read bandwidth (its
least bytes over its time), and groups the products whose weight rows are 16-byte aligned (K a multiple of 8).
--batched draws batched products instead, as the sweep draws them (sweep.draw_one: attention's q @ k.T and p @ v
over 8-128 heads, a mixture of experts' 4-16 x @ W.T; sizes of every class), against torch.bmm; the changed ones
too.

Each product runs three ways, in one process: torch.mm (torch.bmm), tritonmm as shipped, tritonmm under --set
(thresholds.override); each captured in a CUDA graph over operand copies rotated past the L2 (its output kept
alive with its graph), timed in interleaved rounds, each starting one way further along (read-flushed device time,
medians), checked against float64 after an eager call and after the graphs' replays.
--eager times eager calls instead (back-to-back over the rotated operands, wall time a call, host time included, as
bench.sweep's eager column), and a product changes where an eager call's plan differs.
Configs are the default's unless TRITONMM_AUTOTUNE is set. Printed: a line a product, then per group (drawn,
its aligned ones, the changed ones) the geomean and minimum x torch.mm either way; JSON under --out.
"""
import argparse
import functools
import json
import math
import os
import random
import statistics
import sys

import torch

import tritonmm
from tritonmm import config_space, planner, thresholds, timing
from tritonmm.product import Product

from . import sweep
from .common import config_text, copies, device_ms, parse_range, rel_err, replay_errors, round_order, served

BOUND = {"bf16": 1e-2, "fp16": 2e-3, "tf32x3": 1e-5, "fp32": 1e-5}  # tests/test_ops.py's and test_precision.py's
KINDS = {"16bit": ["bf16", "fp16"], "tf32x3": ["tf32x3"], "fp32": ["fp32"]}  # --dtype: the dtypes a product is drawn in
TORCH_DTYPES = {**sweep.DTYPES, "tf32x3": torch.float32, "fp32": torch.float32}  # float32 operands
PRECISIONS = {"bf16": "native", "fp16": "native", "tf32x3": "tf32x3", "fp32": "ieee"}  # planner.chosen's


def parse_set(text: str) -> dict:
    """'name=value,...' of thresholds.Thresholds fields, each value converted to its field's type ('inf' for a
    rule's bar raised past any product); ValueError naming --set and the fields otherwise."""
    fields = thresholds.Thresholds.__annotations__  # name: type (a default's own type may be narrower: 2 ** 31)
    words = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
    out = {}
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"--set takes name=value pairs of thresholds.Thresholds fields, got {item!r}; "
                             f"the fields: {', '.join(fields)}")
        kind = fields[name]
        try:
            out[name] = words[value.lower()] if kind is bool else kind(value)
        except (KeyError, ValueError):
            raise ValueError(f"--set {name}: {value!r} is not a valid {kind.__name__}") from None
    if not out:
        raise ValueError("--set names no threshold: give name=value, e.g. gluon_wide_min_macs=inf")
    return out


def draw(rng: random.Random, n: int, lo: int, hi: int, dtypes=KINDS["16bit"]) -> list:
    """n products of sizes uniform in lo..hi, every other one's sizes multiples of 8; layout and dtype drawn."""
    shapes = []
    for i in range(n):
        sizes = [rng.randint(lo, hi) for _ in range(3)]
        if i % 2 == 0:
            sizes = [_multiple_of_8(x, lo, hi) for x in sizes]
        shapes.append((sweep.Shape(*sizes, rng.choice(["NN", "NT"]), kind="drawn"), rng.choice(dtypes)))
    return shapes


def draw_batched(rng: random.Random, n: int, dtypes=KINDS["16bit"]) -> list:
    """n batched products as the sweep's draw makes them (sweep.draw_one's "batched" kind), each of a class drawn
    from sweep.CLASSES, at most sweep.DRAW_MAX_MACS; dtype drawn."""
    shapes = []
    while len(shapes) < n:
        shape = sweep.draw_one(rng, "batched", rng.choice(sweep.CLASSES))
        if shape.macs <= sweep.DRAW_MAX_MACS:
            shapes.append((shape._replace(kind="drawn"), rng.choice(dtypes)))
    return shapes


def draw_rows(rng: random.Random, n: int, rows: tuple, lo: int, hi: int, dtypes=KINDS["16bit"]) -> list:
    """n decode-like products x @ W.T (NT): M log-uniform in rows, the weight's N and K uniform in lo..hi, every
    other weight's sizes multiples of 8; dtype drawn."""
    shapes = []
    for i in range(n):
        M = round(math.exp(rng.uniform(math.log(rows[0]), math.log(rows[1]))))
        N, K = (rng.randint(lo, hi) for _ in range(2))
        if i % 2 == 0:
            N, K = (_multiple_of_8(x, lo, hi) for x in (N, K))
        shapes.append((sweep.Shape(M, N, K, "NT", kind="drawn"), rng.choice(dtypes)))
    return shapes


def read_bandwidth() -> float:
    """The device's read bandwidth in bytes a second: a 2 GiB bf16 tensor summed (read-flushed device time)."""
    x = torch.randn(2 ** 30, device="cuda", dtype=torch.bfloat16)
    return x.numel() * x.element_size() / (device_ms(lambda: x.sum(dtype=torch.float32)) * 1e-3)


def _multiple_of_8(x: int, lo: int, hi: int) -> int:
    """The multiple of 8 nearest x (round's, ties to even), moved inside lo..hi; x where none is inside."""
    m = 8 * round(x / 8)
    m = m + 8 if m < lo else m - 8 if m > hi else m
    return m if lo <= m <= hi else x


def draw_changed(rng: random.Random, n: int, lo: int, hi: int, changes: dict, tries: int = 2000,
                 dtypes=KINDS["16bit"], rows=None, captured: bool = True, batched: bool = False,
                 k_range=(256, 4096), any_size: bool = False) -> list:
    """n products whose plan (kernel path and config, captured or in an eager call) differs under changes; sizes as
    the module says (K log-uniform in ``k_range``; ``any_size``: M, N and K of any size, not multiples of 8), with
    ``rows`` (LO, HI) decode-like ones as draw_rows draws them, or ``batched`` ones as draw_batched does. Planned
    with the default configs (TRITONMM_AUTOTUNE unset for the draw): no candidate is tuned to be dropped."""
    shapes, saved = [], os.environ.pop("TRITONMM_AUTOTUNE", None)
    try:
        _draw_changed(rng, n, lo, hi, changes, tries, shapes, dtypes, rows, captured, batched, k_range, any_size)
    finally:
        if saved is not None:
            os.environ["TRITONMM_AUTOTUNE"] = saved
    return shapes


def _draw_changed(rng, n, lo, hi, changes, tries, shapes, dtypes, rows, captured, batched, k_range, any_size):
    for _ in range(tries):
        if len(shapes) == n:
            break
        if batched:
            drawn, dtype = draw_batched(rng, 1, dtypes)[0]
            shape = drawn._replace(kind="changed")
        elif rows:
            drawn, dtype = draw_rows(rng, 1, rows, lo, hi, dtypes)[0]
            shape = drawn._replace(kind="changed")
        else:
            M, N = (_changed_size(rng, lo, hi, any_size) for _ in range(2))
            K = round(math.exp(rng.uniform(*map(math.log, k_range))))
            K = K if any_size else _multiple_of_8(K, *k_range)
            shape, dtype = sweep.Shape(M, N, K, rng.choice(["NN", "NT"]), kind="changed"), rng.choice(dtypes)
        a, b = sweep.operands(shape, TORCH_DTYPES[dtype])
        if _plan(a, b, {}, dtype, captured) != _plan(a, b, changes, dtype, captured):
            shapes.append((shape, dtype))


def _changed_size(rng: random.Random, lo: int, hi: int, any_size: bool = False) -> int:
    """M or N of a changed product: in lo..hi + 1000, a multiple of 8 of at least 8 (--sizes may start below 4) unless
    ``any_size``."""
    x = rng.randint(lo, hi + 1000)
    return x if any_size else max(8, 8 * round(x / 8))


def _plan(a, b, changes: dict, dtype: str, captured: bool = True) -> str:
    """The path and config planner.chosen gives, and a wave-tail split's tail launch: its tile and slices of K
    (Product.tail_launch; design.md: tail-slices), which the config does not tell."""
    with thresholds.override(**changes):
        cfg, path = planner.chosen(a, b, PRECISIONS[dtype], captured=captured, served=served(a, captured))
        if config_space.tail(cfg) and path in ("tma", "tma+staged"):
            plan = Product(a, b, planner.new_out(a, b), PRECISIONS[dtype], captured=captured,
                           served=served(a, captured))
            if rows := plan.tail_rows(cfg):
                tail, split = plan.tail_launch(plan.M - rows)
                path += f" tail {tail.kwargs['BLOCK_M']}x{tail.kwargs['BLOCK_N']}/{split}"
    return f"{path} {config_text(cfg)}"


def measure(shape, dtype: str, changes: dict, rounds: int, eager: bool = False) -> dict:
    dt = TORCH_DTYPES[dtype]
    Z, M, N, K = shape.Z, shape.M, shape.N, shape.K
    sets = [sweep.operands(shape, dt) for _ in range(copies(Z * (M * K + K * N) * dt.itemsize))]
    ref = sets[0][0].double() @ sets[0][1].double()
    ours = functools.partial(tritonmm.matmul, input_precision=PRECISIONS[dtype]) if dt == torch.float32 \
        else tritonmm.matmul
    ways = {"torch": (torch.bmm if Z > 1 else torch.mm, {}), "shipped": (ours, {}), "changed": (ours, changes)}
    graphs, outs, errs = {}, {}, {}
    for name, (fn, over) in ways.items():
        with thresholds.override(**over):
            out = outs[name] = torch.full(((Z,) if Z > 1 else ()) + (M, N), float("nan"), device="cuda",
                                          dtype=dt)  # alive with its graph
            fn(*sets[0], out=out)
            errs[name] = rel_err(out, ref)
            graphs[name] = sweep._graph(lambda a, b, out=out, fn=fn: fn(a, b, out=out), sets)
    plans = {name: _plan(*sets[0], over, dtype, not eager) for name, (_, over) in ways.items() if name != "torch"}
    times = {name: [] for name in graphs}
    for i in range(rounds):
        for name in round_order(list(graphs), i):
            if eager:
                fn, over = ways[name]
                call = sweep.cycling(lambda a, b: fn(a, b, out=outs[name]), sets)
                with thresholds.override(**over):
                    times[name].append(timing.host_us_per_call(call, calls=300))
            else:
                times[name].append(device_ms(graphs[name].replay) / len(sets) * 1e3)
    us = {name: statistics.median(t) for name, t in times.items()}
    replayed = replay_errors(graphs, outs, sets)  # each graph's output after its last call
    return dict(kind=shape.kind, dtype=dtype, shape=shape.text, layout=shape.layout, us=us, rel_err=errs,
                replay_rel_err=replayed, plans=plans,
                ok=all(e < BOUND[dtype] for e in (*errs.values(), *replayed.values())))


def _mnk(row: dict) -> tuple:
    """(M, N, K) of a row, from its shape's text: "MxNxK", or "Zx(MxNxK)" for a batch (sweep.Shape.text)."""
    return tuple(int(n) for n in row["shape"].rsplit("(", 1)[-1].rstrip(")").split("x"))


def summary(rows: list) -> list:
    """Lines: per group, the geomean and minimum x torch.mm as shipped and as changed, and how many lead."""
    lines = []
    drawn = [r for r in rows if r["kind"] == "drawn"]
    if drawn and all("read_share" in r for r in drawn):  # --rows: x @ W.T, whose rows are K long but for C's
        aligned_name, aligned = "drawn, weight rows 16-byte aligned", [r for r in drawn if _mnk(r)[2] % 8 == 0]
    else:
        aligned_name = "drawn, sizes multiples of 8"
        aligned = [r for r in drawn if all(n % 8 == 0 for n in _mnk(r))]
    for name, group in (("drawn", drawn), (aligned_name, aligned),
                        ("changed", [r for r in rows if r["kind"] == "changed"])):
        if not group:
            continue
        x = {w: [r["us"]["torch"] / r["us"][w] for r in group] for w in ("shipped", "changed")}
        gm = {w: math.exp(sum(map(math.log, v)) / len(v)) for w, v in x.items()}
        ahead = sum(s > c for s, c in zip(x["shipped"], x["changed"]))
        base = "torch.bmm" if all("(" in r["shape"] for r in group) else "torch.mm"  # batches: "Zx(MxNxK)"
        lines.append(f"{name} ({len(group)}): x {base} shipped {gm['shipped']:.3f} (min {min(x['shipped']):.3f}), "
                     f"changed {gm['changed']:.3f} (min {min(x['changed']):.3f}); shipped ahead on {ahead}")
        if all("read_share" in r for r in group):
            lines.append("  share of the read bandwidth, median (min): " + ", ".join(
                f"{w} {statistics.median(v):.0%} ({min(v):.0%})" for w in ("torch", "shipped", "changed")
                for v in [[r["read_share"][w] for r in group]]))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", required=True, help="thresholds changed, name=value[,name=value]")
    parser.add_argument("--sizes", default="1000-2500", help="LO-HI of the drawn sizes")
    parser.add_argument("--draw", type=int, default=10)
    parser.add_argument("--changed", type=int, default=0, help="products drawn until this many change plan")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dtype", choices=list(KINDS), default="16bit",
                        help="16bit: bf16 and fp16, drawn; tf32x3: float32 in tf32x3, against IEEE SGEMM; fp32: "
                             "float32 in IEEE precision, against the same")
    parser.add_argument("--rows", help="LO-HI: draw decode-like products x @ W.T instead, M log-uniform in LO-HI "
                        "and the weight's sizes in --sizes (draw_rows); also prints each one's share of the read "
                        "bandwidth")
    parser.add_argument("--batched", action="store_true", help="draw batched products instead, as the sweep draws "
                        "them (draw_batched), against torch.bmm; --sizes does not apply")
    parser.add_argument("--eager", action="store_true", help="time eager calls, host time included, and change "
                        "products whose eager plan differs (default: CUDA-graph replays, captured plans)")
    parser.add_argument("--k", help="LO-HI: the changed products' K, log-uniform (default 256-4096; with --changed, "
                        "not with --rows or --batched)")
    parser.add_argument("--unaligned", action="store_true", help="the changed products' M, N and K of any size, "
                        "not multiples of 8 (with --changed, not with --rows or --batched)")
    parser.add_argument("--out", help="a folder for ab_seed<seed>.json")
    args = parser.parse_args(argv)
    try:
        changes = parse_set(args.set)
        lo, hi = parse_range(args.sizes, "--sizes", "1000-2500")
        rows_range = parse_range(args.rows, "--rows", "2-64") if args.rows else None
        k_range = parse_range(args.k or "256-4096", "--k", "32-256")
    except ValueError as e:
        parser.error(str(e))
    if args.batched and rows_range:
        parser.error("--batched and --rows draw different products: give one")
    if (args.k or args.unaligned) and (args.batched or rows_range or not args.changed):
        parser.error("--k and --unaligned shape the --changed products of the plain draw: give --changed, and drop "
                     "--rows and --batched, or drop them")
    if not args.unaligned and _multiple_of_8(k_range[0], *k_range) % 8:
        parser.error(f"--k {args.k} holds no multiple of 8: widen it, or give --unaligned")
    if not torch.cuda.is_available():
        print("bench.ab times products on a CUDA GPU; none is available here", file=sys.stderr)
        return 2
    import triton
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; changed: {changes}; "
          f"timed: {'eager calls' if args.eager else 'CUDA-graph replays'}")
    if args.dtype in ("tf32x3", "fp32"):  # torch.mm's float32 as IEEE SGEMM, whatever the process asked before
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    rng = random.Random(args.seed)
    dtypes = KINDS[args.dtype]
    if args.batched:
        shapes = draw_batched(rng, args.draw, dtypes)
    elif rows_range:
        shapes = draw_rows(rng, args.draw, rows_range, lo, hi, dtypes)
    else:
        shapes = draw(rng, args.draw, lo, hi, dtypes)
    if args.changed:
        shapes += draw_changed(rng, args.changed, lo, hi, changes, dtypes=dtypes, rows=rows_range,
                               captured=not args.eager, batched=args.batched, k_range=k_range,
                               any_size=args.unaligned)
    if rows_range:
        read = read_bandwidth()
        print(f"read bandwidth {read / 1e9:.0f} GB/s (2 GiB summed)")
    rows = []
    for shape, dtype in shapes:
        r = measure(shape, dtype, changes, args.rounds, args.eager)
        rows.append(r)
        x = {w: r["us"]["torch"] / r["us"][w] for w in ("shipped", "changed")}
        share = ""
        if rows_range:  # the bytes read and written at least, against the read bandwidth
            nbytes = (shape.M * shape.K + shape.K * shape.N + shape.M * shape.N) * TORCH_DTYPES[dtype].itemsize
            r["read_share"] = {w: nbytes / (t * 1e-6) / read for w, t in r["us"].items()}
            share = " | of read bandwidth: " + ", ".join(f"{w} {v:.0%}" for w, v in r["read_share"].items())
        print(f"{r['kind']:7s} {dtype} {r['shape']:>15s} {r['layout']}: torch {r['us']['torch']:7.1f} us | "
              f"shipped {x['shipped']:.3f} [{r['plans']['shipped']}] | changed {x['changed']:.3f} "
              f"[{r['plans']['changed']}]" + share +
              ("" if r["ok"] else f" | WRONG {r['rel_err']} {r['replay_rel_err']}"), flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"ab_seed{args.seed}.json"), "w") as f:
            plain = not (args.batched or rows_range)
            json.dump(dict(changes=changes, seed=args.seed, sizes=args.sizes, rows_range=args.rows,
                           batched=args.batched, k="-".join(map(str, k_range)) if plain else None,
                           unaligned=args.unaligned,
                           timed="eager" if args.eager else "graph", rows=rows), f,
                      indent=1, default=str)
    print("\n".join(summary(rows)))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
