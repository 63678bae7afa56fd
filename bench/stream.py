"""python -m bench.stream: every tile of decode products x @ W.T timed against cuBLAS, the measurement the stream
model (tritonmm/cost_model.py: stream_us) is fitted to and checked by (design.md: stream-model).

    python -m bench.stream --rows 16,32,64 --out results/stream/
    python -m bench.stream --rows 96,128,192,256,384 --out results/stream/    # past the model's class

For each M of --rows and each weight (N, K) of WEIGHTS (or --weights), the product runs in a CUDA graph over operand
copies rotated past the L2 (read-flushed device time, medians) under torch.mm and under every config pinned in turn:
the stream model's candidates at both tile heights (16 and 64 rows; past STREAM_MAX_ROWS rows, the 64-row ones and
TALL's 128-row ones, in at most TALL_MAX_SPLIT slices), the tuner's own candidates and the shipped default, each
checked against float64 first; and the planner's own choice unpinned ("shipped": on Triton >= 3.8 possibly a Gluon
schedule). Unlike the tuner (tuning.py), which times a product's weight hot in the L2, this streams it from HBM, as
a model's decode does. Printed: per product cuBLAS's time, the shipped plan's, the default's and the four fastest
configs, x cuBLAS; last the geomean of the default and of the best. Products of few tiles (the 4096-wide
weights: rules.few_tiles) of K under thresholds' stream_few_tiles_min_k run on the pointer kernel, whatever the
config; each row names its kernel path. In CUDA graphs the planner runs products of 2-32 rows as their transpose
(design.md: stream-transpose): "shipped" times that plan, the pinned configs and the default the rows' orientation.
The JSON under --out keeps every config's time and the device's facts: tests/test_cost_model.py replays the model's
picks on it.
"""
import argparse
import json
import os
import statistics
import sys

import torch

import tritonmm
from tritonmm import config_space, cost_model, device, planner, splits, timing
from tritonmm.precision import resolve_precision
from tritonmm.product import Product

from . import sweep
from .common import config_text, copies, rel_err  # config_text: how the JSON names a config

# Llama-3-8B's q/o and MLP weights, and the 5120-wide ones of Llama-2-13B: the widths issue #43's decode target names.
WEIGHTS = [(4096, 4096), (14336, 4096), (4096, 14336), (5120, 5120), (13824, 5120), (5120, 13824)]
BOUND = 1e-2  # bf16's, as tests/test_ops.py
# Past the stream model's rows: 128-row tiles (BLOCK_N, BLOCK_K, num_stages, num_warps) beside its 64-row ones, whole
# and in up to TALL_MAX_SPLIT slices, to see where rows of tiles stop streaming the weight.
TALL = [(64, 128, 4, 4), (128, 64, 4, 4), (128, 64, 6, 4), (256, 64, 3, 8), (256, 64, 4, 8)]
TALL_MAX_SPLIT = 4
WAYS = ("cublas", "shipped")  # the times that are not a pinned config's
MAX_ROWS = 1024  # --rows' bound: the products stay weight-streaming, not many waves of tiles


def configs(product: Product, M: int, K: int, default) -> dict:
    """{text: config} the run times: the stream model's candidates at both heights (past its rows, the 64-row ones
    and TALL's, in at most TALL_MAX_SPLIT slices), the tuner's, and ``default`` (the product's heuristic)."""
    if M <= cost_model.STREAM_MAX_ROWS:
        stream = cost_model.stream_candidates(1, product.N, K) + \
            cost_model.stream_candidates(cost_model.STREAM_MAX_ROWS, product.N, K)
    else:
        tall = [config_space.make_config(128, bn, bk, stages, warps, SPLIT_K=split) for bn, bk, stages, warps in TALL
                for split in splits.tma_slices(K, bk, TALL_MAX_SPLIT)]
        stream = [c for c in cost_model.stream_candidates(cost_model.STREAM_MAX_ROWS, product.N, K)
                  if config_space.split_k(c) <= TALL_MAX_SPLIT] + tall
    every = product.prune(stream)[0] + product.candidates() + [default]
    return {config_text(c): c for c in every}


def measure(M: int, N: int, K: int, dtype=torch.bfloat16) -> dict:
    shape = sweep.Shape(M, N, K, "NT")
    sets = [sweep.operands(shape, dtype) for _ in range(copies((M * K + K * N) * dtype.itemsize))]
    out = torch.empty(M, N, dtype=dtype, device="cuda")
    a, b = sets[0]
    product = Product(a, b, out, resolve_precision(dtype, None), captured=True)
    ref = a.double() @ b.double()

    def time_us(call) -> float:
        graph = sweep._graph(call, sets)
        return timing.median_ms(graph.replay, warmup_ms=5, rep_ms=30, flush="read") / len(sets) * 1e3

    times = {"cublas": time_us(lambda x, w: torch.mm(x, w, out=out))}
    cfg, path = planner.chosen(a, b, "native", captured=True)
    shipped = f"{path} {config_text(cfg)}"
    out.fill_(float("nan"))
    tritonmm.mm(a, b, out=out)
    if not rel_err(out, ref) < BOUND:
        raise AssertionError(f"{M}x{N}x{K} as shipped ({shipped}): relative error {rel_err(out, ref):.1e}")
    times["shipped"] = time_us(lambda x, w: tritonmm.mm(x, w, out=out))
    default = product.heuristic()
    for text, cfg in configs(product, M, K, default).items():
        pinned = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        out.fill_(float("nan"))
        tritonmm.mm(a, b, out=out, config=pinned)
        err = rel_err(out, ref)
        if not err < BOUND:
            raise AssertionError(f"{M}x{N}x{K} under {text}: relative error {err:.1e}")
        times[text] = time_us(lambda x, w, pinned=pinned: tritonmm.mm(x, w, out=out, config=pinned))
    return dict(M=M, N=N, K=K, path=product.path, cublas=times["cublas"], default=config_text(default),
                default_us=times[config_text(default)], shipped=shipped, times=times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="16,32,64", help=f"the products' M, comma-separated, 2 to {MAX_ROWS}")
    parser.add_argument("--weights", help="NxK,...: the weights (N rows of K) instead of WEIGHTS, e.g. another "
                        "model's, to check a fit on products it was not fitted to")
    parser.add_argument("--out", help="a folder for stream_configs.json")
    args = parser.parse_args(argv)
    try:
        rows_m = [int(m) for m in args.rows.split(",")]
        if not all(2 <= m <= MAX_ROWS for m in rows_m):
            raise ValueError
    except ValueError:
        parser.error(f"--rows takes whole numbers of 2 to {MAX_ROWS}, comma-separated, not {args.rows!r}")
    try:
        weights = [tuple(int(x) for x in w.split("x")) for w in args.weights.split(",")] if args.weights else WEIGHTS
        if not all(len(w) == 2 and min(w) >= 1 for w in weights):
            raise ValueError
    except ValueError:
        parser.error(f"--weights takes NxK pairs of whole numbers, comma-separated (e.g. 3584x18944), "
                     f"not {args.weights!r}")
    if not torch.cuda.is_available():
        print("bench.stream times products on a CUDA GPU; none is available here", file=sys.stderr)
        return 2
    import triton
    facts = device.facts(torch.device("cuda"))
    print(f"{facts.name}, torch {torch.__version__}, triton {triton.__version__}; {facts.num_sms} SMs, "
          f"HBM {facts.hbm_bytes_per_s / 1e12:.2f} TB/s (clock x bus width)")
    rows = []
    for M in rows_m:
        for N, K in weights:
            r = measure(M, N, K)
            rows.append(r)
            fastest = sorted((t, c) for c, t in r["times"].items() if c not in WAYS)[:4]
            print(f"{M}x{N}x{K} ({r['path']}): cuBLAS {r['cublas']:.1f} us | shipped {r['shipped']} "
                  f"x{r['cublas'] / r['times']['shipped']:.3f} | default {r['default']} "
                  f"x{r['cublas'] / r['default_us']:.3f}"
                  " | fastest " + ", ".join(f"{c} x{r['cublas'] / t:.3f}" for t, c in fastest), flush=True)
            if args.out:  # after each product: a run cut short keeps what it timed
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, "stream_configs.json"), "w") as f:
                    json.dump(dict(device=facts.name, torch=torch.__version__, triton=triton.__version__,
                                   num_sms=facts.num_sms, hbm_bytes_per_s=facts.hbm_bytes_per_s, rows=rows), f,
                              indent=1)
    best = [r["cublas"] / min(t for c, t in r["times"].items() if c not in WAYS) for r in rows]
    default = [r["cublas"] / r["default_us"] for r in rows]
    print(f"x cuBLAS, geomean (min): default {statistics.geometric_mean(default):.3f} ({min(default):.3f}), "
          f"best {statistics.geometric_mean(best):.3f} ({min(best):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
