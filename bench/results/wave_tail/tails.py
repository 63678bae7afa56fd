"""Wave-tail split on small products: every candidate config timed (bench.regret.measure: graph replay, device
time) for the seed-2731/2701 minima that ran +tail, and for fresh shapes (seed 2801's draw) whose default is +tail."""
import json, sys, time, torch
from bench import sweep, regret


out, budget = sys.argv[1], float(sys.argv[2])
t0 = time.time()
S = sweep.Shape
known = [S(3968, 576, 288, "NT"), S(940, 2304, 768, "NT"), S(3072, 768, 2616, "TN"), S(3072, 768, 7192, "TN"),
         S(3072, 768, 4160, "TN"), S(3056, 3056, 3056, "NN"), S(5024, 5024, 5024, "NN")]
fresh = []
for s in sweep.draw(200, 2801):
    if s.Z > 1 or s.macs > 2 ** 36:
        continue
    p = regret.product_of(s, torch.bfloat16)
    cfg = p.heuristic()
    if p.tail_rows(cfg):
        fresh.append(s)
print(len(fresh), "fresh +tail defaults of 200 drawn", flush=True)
rows = []
for s in known + fresh[:18]:
    if time.time() - t0 > budget:
        print("budget out"); break
    r = regret.measure(s, torch.bfloat16)
    r["fresh"] = s in fresh
    rows.append(r)
    t = {tuple(c): ms for c, ms in r["times"]}
    d = tuple(r["default"]); base = d[:7] + (0,)
    print(f"{r['shape']:>16} {r['layout']} default {d} {t[d]*1e3:.1f} us; same w/o tail {t.get(base, float('nan'))*1e3:.1f};"
          f" best {r['best']} {min(t.values())*1e3:.1f}; regret {r['regret']:.3f}", flush=True)
    json.dump(dict(gpu=torch.cuda.get_device_name(), rows=rows), open(out, "w"), indent=0)
