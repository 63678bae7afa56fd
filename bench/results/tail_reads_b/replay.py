"""CPU replay: the cost model's pick with and without a read floor on a wave-tail split's second launch (it reads all
of B again, and its rows' A), over every stored regret file's measured candidates."""
import glob, statistics
from tritonmm import cost_model, config_space, splits
from bench import regret

orig = cost_model.time_us
def floored_time(cfg, arch, path, M, N, K, Z, num_sms, hbm_bytes_per_s=None, out_bytes=2, l2=None):
    t = orig(cfg, arch, path, M, N, K, Z, num_sms, hbm_bytes_per_s, out_bytes)
    bm, bn, bk, group, warps, stages, split, tail = config_space.as_list(cfg)[:8]
    if t is None or not tail or not hbm_bytes_per_s:
        return t
    rows = splits.tail_rows(M, N, bm, bn, num_sms)
    if not rows:
        return t
    b_bytes = Z * K * N * 2
    if l2 is not None and b_bytes <= l2:
        return t
    rest_cfg = splits.tail_config(M - rows, N, num_sms)
    rest = orig(rest_cfg, arch, path, M - rows, N, K, Z, num_sms, hbm_bytes_per_s, out_bytes)
    main = t / cost_model.TAIL_COST[arch] - rest
    floor = cost_model._hbm_us(arch, b_bytes + Z * (M - rows) * K * 2, hbm_bytes_per_s)
    return (main + max(rest, floor)) * cost_model.TAIL_COST[arch]

rows = []
for f in sorted(glob.glob('bench/results/**/regret*.json', recursive=True)):
    for r in regret._rows([f]):
        rows.append((f, r))
for label, fn in (("as is", orig), ("floor, B past L2 (50 MB)", lambda *a, **k: floored_time(*a, l2=50 * 2**20, **k)),
                  ("floor always", floored_time)):
    cost_model.time_us = fn
    picks = {}
    vals = []
    for f, r in rows:
        got = regret.check([r])
        if got[2]:
            vals.append(got[0]); picks[(f, r["shape"], r["layout"])] = got[0]
    cost_model.time_us = orig
    print(f"{label}: {len(vals)} products, pick/best geomean {statistics.geometric_mean(vals):.4f}")
    if label == "as is":
        base = picks
    else:
        for k, v in picks.items():
            if abs(v - base[k]) > 1e-9:
                print(f"   {k[0].split('/')[-1][:30]} {k[1]} {k[2]}: {base[k]:.3f} -> {v:.3f}")
