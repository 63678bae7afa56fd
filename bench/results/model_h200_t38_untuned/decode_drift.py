"""Whether an eager decode step's time depends on what ran before it in the process (the script behind
decode_drift.log; run before native.linear took N-D inputs): interleaved rounds of 100 steps each variant fresh,
after graph capture, after a replay; bench.model_bench.measure_step for decode (3 rounds of 0.3 s, as the bench
then timed it); after a training step; after gc.collect. aten's own step moved between 1.25 and 2.36 ms in the
one process, the ratios much less (use_tritonmm 1.15-1.30x aten, swap_linears 0.95-1.14x)."""
import gc, statistics, time, torch
from tritonmm import native
from bench import model_bench
class P:
    def step(self, s): pass
variants = model_bench.models(torch.bfloat16)
def loop(f, n):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): f()
    torch.cuda.synchronize(); return 1e3 * (time.perf_counter() - t0) / n
def clean(tag, fns):
    res = {n: [] for n in variants}
    s0 = native.stats()
    for r in range(5):
        for n, (m, c) in variants.items():
            with c(): res[n].append(loop(fns[n], 100))
    med = {n: statistics.median(v) for n, v in res.items()}
    print(f"{tag:28s} " + "  ".join(f"{n} {v:.3f} (x{med['aten']/v:.2f})" for n, v in med.items()) + f"  native {s0}->{native.stats()} objs {len(gc.get_objects())}", flush=True)
inputs = model_bench.make_inputs("decode", variants["aten"][0], variants["aten"][0].head.out_features)
fns = {n: model_bench.step_fn("decode", m, inputs) for n, (m, c) in variants.items()}
for n, (m, c) in variants.items():
    with c():
        for _ in range(5): fns[n]()
clean("fresh", fns)
graphs = {}
for n, (m, c) in variants.items():
    with c(): graphs[n] = model_bench.capture(fns[n])
clean("after capture", fns)
for n, (m, c) in variants.items():
    with c(): graphs[n]()
clean("after a replay", fns)
del graphs; torch.cuda.synchronize()
rows = model_bench.measure_step("decode", variants, 3, P())
print("bench decode (fresh)        ", {r["kind"]: {k: round(v, 3) for k, v in r["ms"].items()} for r in rows}, flush=True)
clean("after bench decode", fns)
rows = model_bench.measure_step("train", variants, 1, P())
variants["aten"][0].zero_grad(set_to_none=True); torch.cuda.empty_cache()
print("bench train                 ", {r["kind"]: {k: round(v, 3) for k, v in r["ms"].items()} for r in rows}, flush=True)
clean("after train", fns)
rows = model_bench.measure_step("decode", variants, 3, P())
print("bench decode (after train)  ", {r["kind"]: {k: round(v, 3) for k, v in r["ms"].items()} for r in rows}, flush=True)
gc.collect(); clean("after gc.collect", fns)
