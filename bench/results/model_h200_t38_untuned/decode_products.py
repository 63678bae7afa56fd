"""Decode products of LlamaLike (8 rows): device time a call of cuBLAS and of tritonmm's eager plan (L2 flushed
before each, torch.profiler kernel times, median of 7), the eager and captured plans, and host time a call of a
3-D F.linear under use_tritonmm with native dispatch. Run as
``TRITONMM_AUTOTUNE=0 python bench/results/model_h200_t38_untuned/decode_products.py t38`` with native dispatch
built (python -m tritonmm.native)."""
import sys, time, statistics, torch, torch.nn.functional as F, tritonmm
from tritonmm import native
from bench.common import tritonmm_config
TAG = sys.argv[1]
flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
def device_us(fn, reps=7):
    fn(); torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            flush.fill_(1); torch.cuda.synchronize(); fn(); torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_time > 0 and "fill" not in e.name and "elementwise" not in e.name]
    per = len(ev) // reps
    return statistics.median(sum(e.device_time for e in ev[i * per:(i + 1) * per]) for i in range(reps)), per
def host(f, n=300):
    for _ in range(20): f()
    torch.cuda.synchronize(); r = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n): f()
        r.append(1e6 * (time.perf_counter() - t) / n); torch.cuda.synchronize()
    return statistics.median(r)
tot = {"cublas": 0.0, "tritonmm": 0.0}
for name, N, K in [("q/o", 4096, 4096), ("k/v", 1024, 4096), ("gate/up", 14336, 4096), ("down", 4096, 14336), ("head", 32000, 4096)]:
    x = torch.randn(8, K, device="cuda", dtype=torch.bfloat16); w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    c, nc = device_us(lambda: torch.mm(x, w.T)); t, nt = device_us(lambda: tritonmm.mm(x, w.T))
    n = {"q/o": 2, "k/v": 2, "gate/up": 2, "down": 1, "head": 0.5}[name]
    tot["cublas"] += n * c; tot["tritonmm"] += n * t
    x3 = x[:, None, :]
    a = host(lambda: F.linear(x3, w))
    with tritonmm.use_tritonmm():
        F.linear(x3, w); s0 = native.stats(); u = host(lambda: F.linear(x3, w)); s1 = native.stats()
    print(TAG, f"8x{N}x{K} {name}: device cuBLAS {c:.1f} us ({nc} k), tritonmm eager {t:.1f} ({nt} k) x{c / t:.2f}; "
          f"eager {tritonmm_config(x, w.T)[0]} | graph {tritonmm_config(x, w.T, captured=True)[0]}; "
          f"host 3-D F.linear aten {a:.1f} use_tritonmm {u:.1f} hits {s1[0] - s0[0]}", flush=True)
print(TAG, f"per layer (q,k,v,o,gate,up,down) + half the head: device cuBLAS {tot['cublas']:.0f} us, tritonmm eager {tot['tritonmm']:.0f}")
