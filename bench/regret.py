"""python -m bench.regret: what the default config leaves behind, config by config.

    python -m bench.regret --draw 40 --seed 109 --dtype bf16 --out results/regret/
    python -m bench.regret --fit bench/results/regret/regret_bf16_seed110.json [--check other.json ...]
    python -m bench.regret --draw 16 --seed 1401 --rows 17-127     # products of few rows only

For each shape of a draw (bench/sweep.py's draw), the product the planner would build for it eagerly
(a batched shape's entry where the planner slices the batch: rules.batch_slices) is timed under every
config the tuner would time (Product.candidates), the tuner's own way (tuning._time_all: CUDA-graph
replay, device time). The default config (Product.heuristic, the first call's pick) is timed too where
it is not among them. Printed: each shape's best config, the default's, and default time / best time;
last, the geomean of that ratio (the untuned price: the issue's target is within 1.03) and the worst.
The JSON under --out keeps every config's time, so a default-config rule can be checked against the
measured draw on a CPU before a GPU checks it on a fresh one (design.md: default-config-model).

--rows LO-HI draws products of LO to HI rows instead (draw_rows): where the cost model does not rank
(cost_model.MIN_ROWS), the rule-based default decides.

--fit (on any machine) fits tritonmm/cost_model.py's rates to such files and prints them as its RATES,
POINTER and TAIL_COST; --check then replays the model's pick on other files: per file, the geomean of pick
time / best time over the products the model covers, beside the recorded default's over the same.
"""
import argparse
import json
import math
import random
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
from tabulate import tabulate

from tritonmm import config_space, cost_model, device, rules, tuning
from tritonmm.product import Product
from tritonmm.precision import resolve_precision

from . import sweep
from .common import parse_range


def product_of(shape: sweep.Shape, dtype: torch.dtype) -> Product:
    """The eager Product the planner builds for shape: a batch's entry where the planner slices the batch."""
    a, b = sweep.operands(shape, dtype)
    if a.dim() == 3 and rules.batch_slices(device.facts(a.device), a, b, False):
        a, b = a[0], b[0]
    out = a.new_empty((*a.shape[:-1], b.shape[-1]))
    return Product(a, b, out, resolve_precision(dtype, None))


def draw_rows(n: int, seed: int, lo: int, hi: int) -> list:
    """n products of lo to hi rows (log-uniform, any multiple; each drawn alone, so one may repeat): x @ W.T
    against sweep.MODEL_WEIGHTS, and every fourth a mixture of experts' batch of 4-16 such products against
    sweep.MLP_WEIGHTS (decode, speculative decode and short prefill; the experts' tokens)."""
    rng = random.Random(seed)
    shapes = []
    for i in range(n):
        m = round(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        if i % 4 == 3:
            n_, k = rng.choice(sweep.MLP_WEIGHTS)
            shapes.append(sweep.Shape(m, n_, k, "NT", rng.choice((4, 8, 16)), "batched"))
        else:
            n_, k = rng.choice(sweep.MODEL_WEIGHTS)
            shapes.append(sweep.Shape(m, n_, k, "NT", kind="forward"))
    return shapes


def measure(shape: sweep.Shape, dtype: torch.dtype) -> dict:
    """One shape's row: every candidate's median ms (as_list -> ms), the default's and the best's."""
    product = product_of(shape, dtype)
    default = product.heuristic()
    candidates = product.candidates() or [default]
    if default not in candidates:
        candidates.append(default)
    with device.on_device(product.device):
        times = tuning._time_all(product, candidates, graph=True, progress=None)
    best = min(times, key=times.get)
    return dict(shape=shape.text, layout=shape.layout, kind=shape.kind, Z=shape.Z, M=shape.M, N=shape.N, K=shape.K,
                entry_Z=product.Z, path=product.path + ("+staged" if product.staged else ""),
                default=config_space.as_list(default), best=config_space.as_list(best),
                times=[[config_space.as_list(c), ms] for c, ms in times.items()],
                regret=times[default] / times[best])


# Files written before the JSON recorded the device's memory bandwidth were all timed on H100 80GB HBM3s, whose
# torch.cuda.get_device_properties report a 2619 MHz memory clock and a 5120-bit bus (device.hbm_bytes_per_s).
H100_HBM_BYTES_PER_S = device.hbm_bytes_per_s(SimpleNamespace(memory_clock_rate=2619000, memory_bus_width=5120))


def _rows(paths) -> list:
    return [dict(r, num_sms=d.get("num_sms", 132), hbm=d.get("hbm_bytes_per_s", H100_HBM_BYTES_PER_S))
            for path in paths for d in [json.loads(Path(path).read_text())] for r in d["rows"]]


def _covered(r) -> bool:
    """Whether cost_model ranks r's configs: its covers(), narrow reads judged from the sizes (the pointer
    kernel's rows of 16-bit elements are 16-byte aligned where a multiple of 8 elements)."""
    a_rows = r["M"] if r["layout"][0] == "T" else r["K"]
    b_rows = r["K"] if r["layout"][1] == "T" else r["N"]
    narrow = r["path"].startswith("pointer") and (a_rows % 8 or b_rows % 8)
    Z = r["Z"] if r["entry_Z"] > 1 else 1
    return cost_model.covers("sm90", "16bit", r["M"], r["N"], Z, r["num_sms"], bool(narrow))


def _samples(rows):
    """(path, key, waves, multiply-adds a tile, us, split, tail, row) of every timed whole-K config of the
    covered rows; waves counts the whole product's tiles (a TAIL config's too)."""
    out = []
    for r in filter(_covered, rows):
        Z = r["Z"] if r["entry_Z"] > 1 else 1
        for c, ms in r["times"]:
            # as_list's full length (files from before PER_SM hold shorter lists); two programs an SM are not the
            # rate of one, which the fit is of
            cfg = config_space.from_list(c)
            bm, bn, bk, group, warps, stages, split, tail, per_sm = config_space.as_list(cfg)
            if bm == 1 or split > 1 or per_sm > 1 or config_space.tuned_tma_only(cfg):
                continue
            waves = config_space.cdiv(config_space.cdiv(r["M"], bm) * config_space.cdiv(r["N"], bn) * Z, r["num_sms"])
            work = bm * bn * config_space.cdiv(r["K"], bk) * bk * 1e-6
            out.append((r["path"].split("+")[0], (bm, bn, bk, group, warps, stages), waves, work, ms * 1e3, tail, r))
    return out


def _lstsq(columns, us):
    """Non-negative least squares of sum(coef * column) against us, in relative error (each row over its us):
    a coefficient the fit drives below zero is dropped and the rest fitted again."""
    keep = list(range(len(columns)))
    while True:
        A = np.array([[columns[j][i] / us[i] for j in keep] for i in range(len(us))])
        coef = np.linalg.lstsq(A, np.ones(len(us)), rcond=None)[0]
        if (coef >= 0).all() or len(keep) == 1:
            full = [0.0] * len(columns)
            for j, v in zip(keep, coef):
                full[j] = max(0.0, float(v))
            return full
        keep = [j for j, v in zip(keep, coef) if v > 0] or keep[:1]


def fit(rows) -> dict:
    """cost_model's tables fitted to rows (module docstring): per TMA config (us per million MACs an SM, us
    per tile) on its whole-K, no-tail samples; the pointer kernel's (alpha, beta, gamma) against those; TAIL_COST
    as the median of the tail configs' time over their two launches' predicted tiles."""
    samples = _samples(rows)
    rates = {}
    for key in sorted({s[1] for s in samples if s[0] == "tma"}, key=lambda k: (-k[0] * k[1], k)):
        own = [s for s in samples if s[0] == "tma" and s[1] == key and not s[5]]
        if len(own) >= 2:
            rates[key] = tuple(_lstsq([[s[2] * s[3] for s in own], [s[2] for s in own]], [s[4] for s in own]))
    pointer = [s for s in samples if s[0] == "pointer" and s[1] in rates and not s[5]]
    alpha_beta_gamma = _lstsq([[s[2] * s[3] * rates[s[1]][0] for s in pointer],
                               [s[2] * rates[s[1]][1] for s in pointer], [s[2] for s in pointer]],
                              [s[4] for s in pointer]) if pointer else [1.0, 1.0, 0.0]
    tables = dict(RATES={"sm90": rates}, POINTER={"sm90": tuple(alpha_beta_gamma)}, TAIL_COST={"sm90": 1.0})
    beyond = []
    with _tables(tables):
        for path, key, waves, work, us, tail, r in samples:
            if tail:
                Z = r["Z"] if r["entry_Z"] > 1 else 1
                t = cost_model.time_us(config_space.make_config(*key[:3], key[5], key[4], GROUP_M=key[3], TAIL=1),
                                       "sm90", path, r["M"], r["N"], r["K"], Z, r["num_sms"], r["hbm"])
                if t is not None:
                    beyond.append(us / t)
    tables["TAIL_COST"]["sm90"] = statistics.median(beyond) if beyond else 1.0
    return tables


class _tables:
    """Within the block, cost_model reads the given tables instead of its own."""
    def __init__(self, tables):
        self.tables, self.saved = tables, {}

    def __enter__(self):
        for name, table in self.tables.items():
            self.saved[name] = getattr(cost_model, name)
            setattr(cost_model, name, table)

    def __exit__(self, *exc):
        for name, table in self.saved.items():
            setattr(cost_model, name, table)


def check(rows) -> tuple:
    """(geomean of the model's pick time / best time, of the recorded default's, count) over rows it covers;
    the pick is among the recorded candidates the planner lets it rank (no split-K, no tall tile)."""
    picked, recorded = [], []
    for r in filter(_covered, rows):
        Z = r["Z"] if r["entry_Z"] > 1 else 1
        # as_list's full length: files written before PER_SM hold shorter lists (from_list reads them)
        times = {tuple(config_space.as_list(config_space.from_list(c))): ms for c, ms in r["times"]}
        cands = [c for c in map(config_space.from_list, times) if not config_space.tuned_tma_only(c)]
        pick = cost_model.pick(cands, "sm90", r["path"].split("+")[0], r["M"], r["N"], r["K"], Z, r["num_sms"],
                               r["hbm"])
        if pick is not None:
            best = min(times.values())
            picked.append(times[tuple(config_space.as_list(pick))] / best)
            recorded.append(r["regret"])
    geo = statistics.geometric_mean
    return (geo(picked), geo(recorded), len(picked)) if picked else (float("nan"), float("nan"), 0)


def print_fit(paths, check_paths) -> None:
    tables = fit(_rows(paths))
    print("RATES = {\n    \"sm90\": {")
    for key, (rate, tile) in tables["RATES"]["sm90"].items():
        print(f"        {key}: ({rate:.3f}, {tile:.2f}),")
    print("    },\n}")
    print("POINTER = {\"sm90\": (%.2f, %.2f, %.2f)}" % tables["POINTER"]["sm90"])
    print("TAIL_COST = {\"sm90\": %.2f}" % tables["TAIL_COST"]["sm90"])
    with _tables(tables):
        for path in list(paths) + list(check_paths):
            model, default, n = check(_rows([path]))
            print(f"{path}: over the {n} products the model covers, pick / best geomean {model:.3f} "
                  f"(the default recorded in the file: {default:.3f})")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.regret", description=__doc__.split("\n\n")[0])
    p.add_argument("--draw", type=int, default=40, help="shapes to draw (bench/sweep.py's draw)")
    p.add_argument("--seed", type=int, help="the draw's seed: a fresh one checks a rule")
    p.add_argument("--fit", nargs="+", metavar="JSON", help="fit cost_model's rates to these files (no GPU)")
    p.add_argument("--check", nargs="*", default=[], metavar="JSON", help="with --fit: replay the fitted model here")
    p.add_argument("--rows", help="LO-HI: draw products of LO to HI rows (draw_rows) instead of bench.sweep's draw")
    p.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    p.add_argument("--out", help="a folder for regret.json")
    args = p.parse_args(argv)
    if args.rows:
        try:
            lo, hi = parse_range(args.rows, "--rows", "2-127")
        except ValueError as e:
            p.error(str(e))
    if args.fit:
        print_fit(args.fit, args.check)
        return 0
    if args.seed is None:
        p.error("give --seed (a draw to time) or --fit")
    if not torch.cuda.is_available():
        print("bench.regret times kernels on a CUDA GPU: none here.", file=sys.stderr)
        return 1
    dtype = sweep.DTYPES[args.dtype]
    facts = device.facts(torch.device("cuda"))
    rows = []
    if args.rows:
        shapes = draw_rows(args.draw, args.seed, lo, hi)
    else:
        shapes = sweep.draw(args.draw, args.seed)
    suffix = f"_rows{args.rows}" if args.rows else ""
    for i, shape in enumerate(shapes):
        rows.append(measure(shape, dtype))
        r = rows[-1]
        print(f"[{i + 1}/{args.draw}] {r['shape']} {r['layout']} {r['path']}: default/best {r['regret']:.3f}",
              flush=True)
        geo = statistics.geometric_mean(r["regret"] for r in rows)
        if args.out:  # after every shape: a run cut short keeps what it measured
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / f"regret_{args.dtype}_seed{args.seed}{suffix}.json").write_text(json.dumps(
                dict(gpu=torch.cuda.get_device_name(), num_sms=facts.num_sms, hbm_bytes_per_s=facts.hbm_bytes_per_s,
                     torch=torch.__version__, dtype=args.dtype, seed=args.seed, geomean=geo, rows=rows), indent=0))
    worst = sorted(rows, key=lambda r: -r["regret"])[:5]
    print(tabulate([[r["shape"], r["layout"], r["kind"], r["path"], r["default"], r["best"], f"{r['regret']:.3f}"]
                    for r in rows], headers=["shape", "layout", "kind", "path", "default", "best", "default/best"]))
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.dtype}, draw {args.draw} seed "
          f"{args.seed}: default time / tuned time geomean {geo:.3f}; worst "
          + ", ".join(f"{r['shape']} {r['layout']} {r['regret']:.2f}" for r in worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
