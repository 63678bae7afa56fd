"""Two kernel-schedule experiments, every variant timed as CUDA-graph replays over operand copies rotated past the
L2 (bench.common.device_ms: read-flushed, device time), 3 interleaved rounds, checked against float64
(H200, torch 2.11, Triton 3.8, 2026-11-29; python exp.py OUT.json BUDGET_S; exp.log, exp.json).
E1 short K (design.md: short-k-pairs): the TMA kernel's persistent grid at 1 or 2 programs per SM (NUM_SMS doubled
by hand here; PER_SM=2 in a config does the same since).
E2 wave tail (design.md: wave-tail-split): the default's head launch, then the tail rows on the config's own tile
(ts) or tail_config's (small-ts) in S slices of K (TMA split-K + reduce), against tail_config's whole tiles."""
import json, os, statistics, sys, time
import torch
import tritonmm
from bench import sweep
from bench.common import copies, device_ms, rel_err
from tritonmm import config_space, launch, splits
from tritonmm.config_space import cdiv, make_config, variant
from tritonmm.product import Product

S = sweep.Shape
GPU = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
DEV = "cuda" if GPU else "cpu"


def operands(s, dt=torch.bfloat16):
    def op(r, c, t):
        return torch.randn(c, r, device=DEV).to(dt).T if t else torch.randn(r, c, device=DEV).to(dt)
    return op(s.M, s.K, s.layout[0] == "T"), op(s.K, s.N, s.layout[1] == "T")


def tma_product(a, b, out):
    p = Product(a, b, out, "native", captured=True)  # planned as a CUDA graph plans it: the TMA kernel
    if p.path != "tma" and not GPU:  # the interpreter's small shapes: forced, the pointer kernel's constants dropped
        p._use_tma(a, b, out)
        for k in [k for k in p.constants if k.startswith("VEC_")]:
            del p.constants[k]
    assert p.path == "tma" and not p.staged, (p.path, p.staged)
    return p


def occupancy_steps(a, b, out, cfg, per_sm):
    p = tma_product(a, b, out)
    n = p.facts.num_sms * per_sm
    p.facts = p.facts._replace(num_sms=n)
    p.constants["NUM_SMS"] = n
    return p.steps(cfg)


def tail_split_steps(a, b, out, cfg, split, small=False):
    p = tma_product(a, b, out)
    (r0, r1), (r2, r3) = p.row_ranges(cfg)
    head = p._tma_rows(r0, r1, cfg)
    whole = variant(cfg, TAIL=0)
    if split == 0:  # tail_config's tiles, as today
        return p.steps(cfg)
    q = tma_product(a[r2:r3], b, out[r2:r3])
    tile = splits.tail_config(r3 - r2, p.N, p.facts.num_sms) if small else whole
    return [head] + q.steps(variant(tile, SPLIT_K=split))


def run_steps(steps):
    for st in steps:
        launch.launch_step(st)


def time_variants(s, makers, rounds):
    """makers: {name: fn(a, b, out) -> callable}. Returns {name: (median us, rel err)}."""
    dt = torch.bfloat16
    n_sets = copies((s.M * s.K + s.K * s.N) * 2) if GPU else 1
    sets = [operands(s) for _ in range(n_sets)]
    ref = sets[0][0].double() @ sets[0][1].double()
    res, graphs = {}, {}
    for name, make in makers.items():
        outs = [torch.full((s.M, s.N), float("nan"), dtype=dt, device=DEV) for _ in sets]
        try:
            calls = [make(a, b, o) for (a, b), o in zip(sets, outs)]
            for c in calls:
                c()
        except Exception as e:  # a config that does not fit: named, not timed
            print(f"   {name}: {type(e).__name__}: {str(e)[:120]}", flush=True)
            continue
        err = rel_err(outs[0], ref)
        if not GPU:
            res[name] = [float("nan"), err]
            continue
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for c in calls:
                c()
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for c in calls:
                c()
        graphs[name] = (g, len(calls), calls, outs)  # the graph's buffers live as long as it does
        res[name] = [[], err]
    if GPU:
        names = list(graphs)
        for i in range(rounds):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                g, n = graphs[name][:2]
                res[name][0].append(device_ms(g.replay) * 1e3 / n)
        for name in names:
            res[name][0] = statistics.median(res[name][0])
    return res


def report(s, res, rows, tag):
    t = res.get("torch", [float("nan")])[0]
    line = [f"{s.text} {s.layout}"]
    for name, (us, err) in res.items():
        line.append(f"{name} {us:.1f}us ({t / us:.2f}x, e {err:.1e})")
    print(f"[{tag}] " + "; ".join(line), flush=True)
    rows.append(dict(exp=tag, shape=s.text, layout=s.layout, res=res))


def torch_maker(a, b, o):
    return lambda: torch.mm(a, b, out=o)


def default_maker(a, b, o):
    return lambda: tritonmm.matmul(a, b, out=o)


def steps_maker(fn, *args):
    def make(a, b, o):
        steps = fn(a, b, o, *args)
        return lambda: run_steps(steps)
    return make


E1_CFGS = [make_config(128, 128, 64, 3, 4), make_config(128, 128, 64, 5, 4), make_config(128, 64, 64, 4, 4),
           make_config(64, 128, 64, 4, 4), make_config(128, 256, 64, 3, 8), make_config(64, 64, 128, 4, 4)]  # stages, warps


def e1(shapes, rounds, rows):
    for s in shapes:
        makers = {"torch": torch_maker, "default": default_maker}
        for cfg in E1_CFGS:
            k = cfg.kwargs
            for per in (1, 2):
                makers[f"{k['BLOCK_M']}x{k['BLOCK_N']}x{k['BLOCK_K']}s{cfg.num_stages}/{per}"] = \
                    steps_maker(occupancy_steps, cfg, per)
        report(s, time_variants(s, makers, rounds), rows, "E1")


def e2(shapes, rounds, rows):
    for s in shapes:
        a, b = operands(s)
        p = tma_product(a, b, torch.empty(s.M, s.N, dtype=a.dtype, device=DEV))
        cfg = p.heuristic() if GPU else make_config(32, 32, 32, 4, 2)
        cfg = variant(cfg, TAIL=1)
        if not p.tail_rows(cfg):
            print(f"   {s.text}: no tail under {config_space.as_list(cfg)}")
            continue
        k = cfg.kwargs
        (r0, r1), (r2, r3) = p.row_ranges(cfg)
        tiles = cdiv(r3 - r2, k["BLOCK_M"]) * cdiv(s.N, k["BLOCK_N"])
        fit = max(1, p.facts.num_sms // tiles)
        ksteps = cdiv(s.K, k["BLOCK_K"])
        splits_ = sorted({x for x in (2, 4, fit // 2, fit) if 1 < x <= ksteps})
        makers = {"torch": torch_maker, "default": default_maker, "tailcfg": steps_maker(tail_split_steps, cfg, 0),
                  "whole": steps_maker(occupancy_steps, variant(cfg, TAIL=0), 1)}
        for x in splits_:
            makers[f"ts{x}"] = steps_maker(tail_split_steps, cfg, x)
        for x in (2, 4):
            makers[f"small-ts{x}"] = steps_maker(tail_split_steps, cfg, x, True)
        print(f"   {s.text}: cfg {config_space.as_list(cfg)} head {r1} rows, tail {r3 - r2} rows = {tiles} tiles, "
              f"{ksteps} K steps", flush=True)
        report(s, time_variants(s, makers, rounds), rows, "E2")


if __name__ == "__main__":
    out, budget = sys.argv[1], float(sys.argv[2])
    rows, t0 = [], time.time()
    if GPU:
        short = [S(3072, 768, 640, "TN"), S(3968, 576, 288, "NT"), S(940, 2304, 768, "NT"), S(5824, 512, 416, "NT")]
        tails = [S(3072, 768, 2616, "TN"), S(3072, 768, 7192, "TN"), S(2944, 768, 2304), S(3296, 768, 2848),
                 S(5221, 512, 3584, "NT"), S(1454, 5792, 2304), S(3056, 3056, 3056)]
        fresh = []
        for s in sweep.draw(200, 2903):
            if s.Z > 1 or s.macs > 2 ** 36 or len(fresh) >= 6:
                continue
            a, b = operands(s)
            p = Product(a, b, torch.empty(s.M, s.N, dtype=a.dtype, device=DEV), "native", captured=True)
            if p.path == "tma" and not p.staged and p.tail_rows(p.heuristic()):
                fresh.append(s)
        print("fresh tails (seed 2903):", [f"{s.text} {s.layout}" for s in fresh], flush=True)
        for s in tails + fresh:
            if time.time() - t0 > budget * 0.6:
                print("E2 budget out"); break
            e2([s], 3, rows)
            json.dump(rows, open(out, "w"), indent=0)
        for s in short:
            if time.time() - t0 > budget:
                print("E1 budget out"); break
            e1([s], 3, rows)
            json.dump(rows, open(out, "w"), indent=0)
    else:
        e2([S(160, 24, 96, "TN")], 1, rows)
        e1([S(70, 40, 48, "NT")], 1, rows)
