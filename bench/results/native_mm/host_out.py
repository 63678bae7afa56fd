"""Host time a call of tritonmm.mm / matmul with out= (2-D) through native dispatch's C++ repeat against the Python
path (native's module hidden: native._state), and torch.mm(out=): back-to-back calls over one operand set (host loop
time a call / wall time a call), medians of 9 interleaved rounds of 200 calls, each round in another order, one process."""
import statistics, time, torch, tritonmm
from tritonmm import native
from bench import sweep
from bench.common import round_order

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
for M, N, K, lay in [(1024, 1024, 1024, "NN"), (8, 4096, 4096, "NT"), (32, 1024, 4096, "NT"), (192, 64, 4800, "TN"),
                     (37, 2056, 777, "NN"), (256, 256, 256, "NN")]:
    a, b = sweep.operands(sweep.Shape(M, N, K, lay), torch.bfloat16)
    outs = {k: torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16) for k in range(4)}
    fs = {"torch.mm": lambda: torch.mm(a, b, out=outs[0]), "mm python": python_path(lambda: tritonmm.mm(a, b, out=outs[1])),
          "mm native": lambda: tritonmm.mm(a, b, out=outs[2]), "matmul native": lambda: tritonmm.matmul(a, b, out=outs[3])}
    for f in fs.values():
        for _ in range(20): f()
    s0 = native.stats()
    res = {k: [] for k in fs}
    for i in range(9):
        for k in round_order(list(fs), i):
            res[k].append(loop(fs[k], 200))
    s1 = native.stats()
    ref = a.double() @ b.double()
    err = max(((o.double() - ref).norm() / ref.norm()).item() for o in outs.values())
    print(f"{M}x{N}x{K} {lay}: " + "  ".join(f"{k} {statistics.median(h for h, _ in v):.1f}/{statistics.median(w for _, w in v):.1f}"
          for k, v in res.items()) + f"  (host/wall us; native hits {s1[0]-s0[0]}, max rel err {err:.1e})", flush=True)
