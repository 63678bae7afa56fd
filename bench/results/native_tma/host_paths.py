"""Host time per eager call (host loop time and wall time, back-to-back over 3 rotated operand sets, out= given) of
one product on each path, forced by thresholds: torch.mm, tritonmm's pointer kernel, its tl TMA kernel, its Gluon
kernel (wide and cooperative). Medians of 7 interleaved rounds of 300 calls after 30 warm-up calls; each way's
result on the first set against float64; native.stats() at the end (its C++ repeats). Run as
TRITONMM_AUTOTUNE=0 python3 bench/results/native_tma/host_paths.py (with the native build on disk)."""
import statistics, time, torch, tritonmm
from tritonmm import planner, thresholds, native
from bench import sweep
from bench.common import round_order

INF = float("inf")
WAYS = {
    "torch.mm": None,
    "pointer": dict(tma_min_macs=INF, gluon_min_macs=INF, gluon_wide_min_macs=INF, stream_model=False),
    "tl tma": dict(tma_min_macs=0, few_tiles_per_sm=0, captured_tma_divisor=1, gluon_min_macs=INF, gluon_wide_min_macs=INF),
    "gluon wide": dict(tma_min_macs=0, few_tiles_per_sm=0, gluon_min_macs=INF, gluon_wide_min_macs=0, gluon_wide_fill=0,
                       gluon_wide_row_fill=0),
    "gluon coop": dict(tma_min_macs=0, few_tiles_per_sm=0, gluon_min_macs=0, gluon_min_fill=0),
}
print("native built:", native.module() is not None)
for M, N, K, lay in [(1024, 1024, 1024, "NN"), (3914, 768, 768, "NT"), (1520, 1520, 1520, "NN")]:
    sets = [sweep.operands(sweep.Shape(M, N, K, lay), torch.bfloat16) for _ in range(3)]
    outs = {k: torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16) for k in WAYS}
    ref = sets[0][0].double() @ sets[0][1].double()
    fns, plans = {}, {}
    for k, over in WAYS.items():
        if over is None:
            fns[k] = sweep.cycling(lambda a, b, o=outs[k]: torch.mm(a, b, out=o), sets)
        else:
            with thresholds.override(**over):
                plans[k] = " ".join(map(str, planner.chosen(*sets[0], "native", captured=False)[::-1]))
            fns[k] = sweep.cycling(lambda a, b, o=outs[k], over=over: tritonmm.mm(a, b, out=o), sets)
    res = {k: [] for k in WAYS}
    for i in range(7):
        for k in round_order(list(WAYS), i):
            over = WAYS[k] or {}
            with thresholds.override(**over):
                f = fns[k]
                for _ in range(30): f()
                torch.cuda.synchronize(); t0 = time.perf_counter()
                for _ in range(300): f()
                t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
                res[k].append((1e6 * (t1 - t0) / 300, 1e6 * (t2 - t0) / 300))
    errs = {}
    for k, o in outs.items():
        o.fill_(float("nan"))
        with thresholds.override(**(WAYS[k] or {})):
            (torch.mm if WAYS[k] is None else tritonmm.mm)(*sets[0], out=o)
        errs[k] = ((o.double() - ref).norm() / ref.norm()).item()
    print(f"{M}x{N}x{K} {lay}")
    for k in WAYS:
        h = statistics.median(x for x, _ in res[k]); w = statistics.median(y for _, y in res[k])
        print(f"  {k:11s} host {h:6.1f} us  wall {w:6.1f} us  err {errs[k]:.1e}  {plans.get(k, '')}", flush=True)
