"""Host time a call of batched products (3-D, bmm's) through native dispatch's C++ repeat against the Python path
(native's module hidden: native._state), and torch.bmm(out=) on cuBLAS: back-to-back calls over one operand set (host
loop time a call / wall time a call), medians of 9 interleaved rounds of 200 calls, each round in another order, one
process. tritonmm.matmul(out=) as the sweep's eager column calls it; torch.bmm without out= under use_tritonmm() (C++,
and the Python kernel with TRITONMM_NATIVE=0; use_tritonmm() entered and left every round), and aten's own kernel.
A first form of this script hid native._state's module for "override python", which enable() loads again: that
column then timed C++ too (its log: host_bmm_first.log)."""
import os, statistics, time, torch, tritonmm
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
def overridden(f, python=False):
    """f's loop under use_tritonmm(); python: enabled with TRITONMM_NATIVE=0, so that aten::bmm is the Python kernel
    (native.module() reads the variable; hiding native._state's module would not do: enable() loads it again)."""
    def run(n):
        if python:
            os.environ["TRITONMM_NATIVE"] = "0"
        try:
            with tritonmm.use_tritonmm():
                assert native._state["installed"] != python
                return loop(f, n)
        finally:
            os.environ.pop("TRITONMM_NATIVE", None)
    return run
SHAPES = [(32, 255, 128, 255, "NN"), (32, 173, 128, 173, "NN"), (32, 128, 128, 128, "NT"), (8, 128, 768, 3072, "NT"),
          (8, 1152, 128, 1152, "NN"), (4, 224, 768, 3072, "NT"), (64, 288, 96, 288, "NN"), (4, 3, 768, 3072, "NT"),
          (128, 174, 64, 174, "NN"), (16, 788, 788, 80, "NT")]
for Z, M, N, K, lay in SHAPES:
    a, b = sweep.operands(sweep.Shape(M, N, K, lay, Z), torch.bfloat16)
    outs = {k: torch.full((Z, M, N), float("nan"), device="cuda", dtype=torch.bfloat16) for k in range(3)}
    got = {}
    fs = {"torch.bmm": lambda n: loop(lambda: torch.bmm(a, b, out=outs[0]), n),
          "matmul python": lambda n: loop(python_path(lambda: tritonmm.matmul(a, b, out=outs[1])), n),
          "matmul native": lambda n: loop(lambda: tritonmm.matmul(a, b, out=outs[2]), n),
          "aten bmm": lambda n: loop(lambda: got.__setitem__("aten", torch.bmm(a, b)), n),
          "override python": overridden(lambda: got.__setitem__("python", torch.bmm(a, b)), python=True),
          "override native": overridden(lambda: got.__setitem__("native", torch.bmm(a, b)))}
    for f in fs.values():
        f(20)
    s0 = native.stats()
    res = {k: [] for k in fs}
    for i in range(9):
        for k in round_order(list(fs), i):
            res[k].append(fs[k](200))
    s1 = native.stats()
    ref = a.double() @ b.double()
    err = max(((o.double() - ref).norm() / ref.norm()).item() for o in [*outs.values(), *got.values()])
    print(f"{Z}x({M}x{N}x{K}) {lay}: " + "  ".join(
        f"{k} {statistics.median(h for h, _ in v):.1f}/{statistics.median(w for _, w in v):.1f}" for k, v in res.items())
        + f"  (host/wall us; native hits {s1[0]-s0[0]}, max rel err {err:.1e})", flush=True)
