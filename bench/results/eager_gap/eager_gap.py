"""Large batches: eager wall time a call against graph replay, tritonmm and torch.bmm; tritonmm eagerly with and
without PDL, with out= and without; each kernel's device time in eager calls (torch.profiler)."""
import statistics, torch, tritonmm
from tritonmm import timing, thresholds
from bench import sweep
from bench.common import copies, round_order, kernel_times
SHAPES = [(32, 3328, 3328, 128, "NT", torch.float16), (64, 3744, 3744, 128, "NT", torch.float16),
          (128, 2032, 2032, 128, "NT", torch.bfloat16), (4, 768, 4096, 14336, "NT", torch.bfloat16)]
for Z, M, N, K, lay, dt in SHAPES:
    shape = sweep.Shape(M, N, K, lay, Z)
    sets = [sweep.operands(shape, dt) for _ in range(copies(Z * (M * K + K * N) * dt.itemsize))]
    out = torch.empty(Z, M, N, device="cuda", dtype=dt)
    def cyc(f):
        return sweep.cycling(f, sets)
    ways = {"torch eager": cyc(torch.bmm), "tm eager": cyc(tritonmm.matmul), "tm eager nopdl": cyc(tritonmm.matmul),
            "tm eager out=": cyc(lambda a, b: tritonmm.matmul(a, b, out=out)),
            "torch eager out=": cyc(lambda a, b: torch.bmm(a, b, out=out))}
    g_t = sweep._graph(lambda a, b: torch.bmm(a, b, out=out), sets)
    g_m = sweep._graph(lambda a, b: tritonmm.matmul(a, b, out=out), sets)
    res = {k: [] for k in list(ways) + ["torch graph", "tm graph"]}
    n = max(6, int(40e3 / (Z * M * N * K * 2 / 600e12 * 1e6 + 10)))
    for i in range(3):
        for k in round_order(list(res), i):
            if k == "torch graph":
                res[k].append(timing.median_ms(g_t.replay, warmup_ms=5, rep_ms=30) / len(sets) * 1e3)
            elif k == "tm graph":
                res[k].append(timing.median_ms(g_m.replay, warmup_ms=5, rep_ms=30) / len(sets) * 1e3)
            elif k == "tm eager nopdl":
                with thresholds.override(pdl=False):
                    res[k].append(timing.host_us_per_call(ways[k], calls=n, warmup=3))
            else:
                res[k].append(timing.host_us_per_call(ways[k], calls=n, warmup=3))
    kt = kernel_times(lambda: [tritonmm.matmul(*s) for s in sets[:3]])
    ktt = kernel_times(lambda: [torch.bmm(*s) for s in sets[:3]])
    print(f"{Z}x({M}x{N}x{K}) {lay} {str(dt)[6:]} ({len(sets)} sets, {n} calls): " +
          "  ".join(f"{k} {statistics.median(v):.1f}" for k, v in res.items()), flush=True)
    print("   tm kernels (eager): " + "; ".join(f"{name[:40]} {us:.1f}" for name, us in kt), flush=True)
    print("   torch kernels (eager): " + "; ".join(f"{name[:40]} {us:.1f}" for name, us in ktt), flush=True)
