"""Host time a call of tritonmm.mm / matmul (no out) with native dispatch's C++ repeat against the Python path, and
torch.mm: back-to-back calls over one operand set (host loop time a call / wall time a call), medians of 5
interleaved rounds of 200, one process. Python path: native's module hidden (native._state)."""
import statistics, time, torch, tritonmm
from tritonmm import native
from bench import sweep

def loop(f, n):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): f()
    t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
    return 1e6 * (t1 - t0) / n, 1e6 * (t2 - t0) / n

built = native.module()
assert built is not None, "native build missing"
def python_path(f):
    def g():
        native._state["module"] = None; native._state["resolved"] = True
        try: return f()
        finally: native._state["module"] = built
    return g
for M, N, K, lay in [(1024, 1024, 1024, "NN"), (8, 4096, 4096, "NT"), (768, 1840, 1392, "NN"), (1320, 1376, 864, "NT"),
                     (37, 2049, 777, "NN"), (256, 256, 256, "NN")]:
    a, b = sweep.operands(sweep.Shape(M, N, K, lay), torch.bfloat16)
    fs = {"torch.mm": lambda: torch.mm(a, b), "mm python": python_path(lambda: tritonmm.mm(a, b)),
          "mm native": lambda: tritonmm.mm(a, b), "matmul native": lambda: tritonmm.matmul(a, b)}
    for f in fs.values():
        for _ in range(20): f()
    s0 = native.stats()
    res = {k: [] for k in fs}
    for _ in range(5):
        for k, f in fs.items():
            res[k].append(loop(f, 200))
    s1 = native.stats()
    ref = a.double() @ b.double()
    err = max(((f().double() - ref).norm() / ref.norm()).item() for f in fs.values())
    print(f"{M}x{N}x{K} {lay}: " + "  ".join(f"{k} {statistics.median(h for h, _ in v):.1f}/{statistics.median(w for _, w in v):.1f}"
          for k, v in res.items()) + f"  (host/wall us; native hits {s1[0]-s0[0]}, max rel err {err:.1e})", flush=True)
