"""The two launches of a wave-tail split timed as products of their own: the whole waves' rows on the default's
tile, and the tail's rows under tail_config and under every candidate the planner has for them (split-K too)."""
import json, sys, torch
from bench import sweep, regret
from tritonmm import config_space, splits
S = sweep.Shape
out = sys.argv[1]
shapes = [S(3072, 768, 2616, "TN"), S(3072, 768, 7192, "TN"), S(3296, 768, 2848, "NN"), S(2944, 768, 2304, "NN"),
          S(5221, 512, 3584, "NT"), S(884, 5120, 13824, "NN"), S(3056, 3056, 3056, "NN"), S(3968, 576, 288, "NT"),
          S(940, 2304, 768, "NT")]
rows = []
for s in shapes:
    p = regret.product_of(s, torch.bfloat16)
    sms = p.facts.num_sms
    for bm, bn in ((128, 128), (128, 256)):
        r = splits.tail_rows(s.M, s.N, bm, bn, sms)
        if not r:
            continue
        tc = config_space.as_list(splits.tail_config(s.M - r, s.N, sms))
        head = regret.measure(s._replace(M=r), torch.bfloat16)
        tail = regret.measure(s._replace(M=s.M - r), torch.bfloat16)
        th = {tuple(c): ms for c, ms in head["times"]}
        tt = {tuple(c): ms for c, ms in tail["times"]}
        key = (bm, bn, 64, 8, 4 if bn == 128 else 8, 5 if bn == 128 else 4, 1, 0)
        rows.append(dict(shape=s.text, layout=s.layout, tile=(bm, bn), rows=r, head=th.get(key), tail_cfg=tc,
                         tail_cfg_ms=tt.get(tuple(tc)), tail_best=tail["best"], tail_best_ms=min(tt.values()),
                         tail_path=tail["path"], tail_times=tail["times"]))
        x = rows[-1]
        f = lambda v: "-" if v is None else f"{v*1e3:.1f}"
        print(f"{s.text:>16} {s.layout} {bm}x{bn}: head {r} rows {f(x['head'])} us; tail {s.M-r} rows: tail_config {tc} "
              f"{f(x['tail_cfg_ms'])}, best ({tail['path']}) {tail['best']} {f(x['tail_best_ms'])}", flush=True)
        json.dump(rows, open(out, "w"), indent=0)
