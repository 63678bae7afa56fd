"""The eager decode step of bench.model_bench's LlamaLike (Llama-3-8B widths, 2 layers, bf16), the script behind
decode_host.log (H200, Triton 3.8, TRITONMM_AUTOTUNE=0, native dispatch built; run from the repo root):
(1) ms a step per variant, medians of 15 interleaved rounds of 50 back-to-back steps: the host loop's time (steps
issued) and wall time (synchronized at both ends), no profiler active; use_nonative is use_tritonmm() with
TRITONMM_NATIVE=0; (2) host / wall us a call of one decode product (8x1x4096 activations) by each path."""
import os, statistics, time, contextlib, torch, torch.nn.functional as F, tritonmm
from tritonmm import ops
from bench import model_bench
variants = dict(model_bench.models(torch.bfloat16))
@contextlib.contextmanager
def no_native():
    old = os.environ.get("TRITONMM_NATIVE"); os.environ["TRITONMM_NATIVE"] = "0"
    try:
        with tritonmm.use_tritonmm(): yield
    finally:
        if old is None: del os.environ["TRITONMM_NATIVE"]
        else: os.environ["TRITONMM_NATIVE"] = old
variants["use_nonative"] = (variants["aten"][0], no_native)
inputs = model_bench.make_inputs("decode", variants["aten"][0], variants["aten"][0].head.out_features)
fns = {n: model_bench.step_fn("decode", m, inputs) for n, (m, c) in variants.items()}
def loop(f, n):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): f()
    t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
    return 1e3 * (t1 - t0) / n, 1e3 * (t2 - t0) / n
for n, (m, c) in variants.items():
    with c():
        for _ in range(10): fns[n]()
res = {n: [] for n in variants}
for r in range(15):
    for n, (m, c) in variants.items():
        with c():
            res[n].append(loop(fns[n], 50))
print("== (1) decode step, ms: host loop a step / wall a step, medians of 15 interleaved rounds of 50")
for n, v in res.items():
    h = statistics.median(x for x, _ in v); w = statistics.median(x for _, x in v)
    print(f"{n:14s} host {h:.3f}  wall {w:.3f}  (aten wall / this {statistics.median(x for _, x in res['aten'])/w:.2f})")
# (2) one product, the model's q projection shape and the MLP's
base = variants["aten"][0]; swapped = variants["swap_linears"][0]
print("== (2) host us a call / wall us a call, one product, medians of 5 rounds of 200")
lins = [(n, mod) for n, mod in base.named_modules() if isinstance(mod, torch.nn.Linear)][:7]
smods = dict(swapped.named_modules())
for name, lin in lins[:3] + lins[4:5]:
    W = lin.weight; xin = torch.randn(8, 1, W.shape[1], device="cuda", dtype=torch.bfloat16)
    sm = smods[name]
    cands = {"aten F.linear": (lambda: F.linear(xin, W), contextlib.nullcontext),
             "use F.linear": (lambda: F.linear(xin, W), tritonmm.use_tritonmm),
             "ops.linear": (lambda: ops.linear(xin, W), contextlib.nullcontext),
             "swapped module": (lambda: sm(xin), contextlib.nullcontext)}
    with torch.no_grad():
        for k, (f, c) in cands.items():
            with c():
                for _ in range(20): f()
        rr = {k: [] for k in cands}
        for _ in range(5):
            for k, (f, c) in cands.items():
                with c(): rr[k].append(loop(f, 200))
    print(name, tuple(W.shape), "  ".join(f"{k}: {1e3*statistics.median(a for a,_ in v):.1f}/{1e3*statistics.median(b for _,b in v):.1f}" for k, v in rr.items()))
