"""Host time per eager call, tritonmm against torch (back-to-back calls over one operand set: the host loop's time a
call and wall time a call, medians of 5 interleaved rounds of 200), per plan kind; then parts of the 1024^3 call's path
and a cProfile of it. The script behind this folder's logs:

    OUT=<folder> python bench/results/direct_launch/host.py <tag>     # writes host_<tag>.json and prof_<tag>.txt

(the "old38" run put the previous commit's tritonmm first on PYTHONPATH)."""
import cProfile, io, json, os, pstats, sys, time, statistics
import torch, tritonmm
from tritonmm import relaunch, fast_launch, thresholds
from bench import sweep

OUT = os.environ.get("OUT", "/tmp")
TAG = sys.argv[1]

def loop(f, n):
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): f()
    t1 = time.perf_counter(); torch.cuda.synchronize(); t2 = time.perf_counter()
    return 1e6 * (t1 - t0) / n, 1e6 * (t2 - t0) / n

def compare(fs, n=200, rounds=5):
    for f in fs.values():
        for _ in range(20): f()
    res = {k: [] for k in fs}
    for _ in range(rounds):
        for k, f in fs.items():
            res[k].append(loop(f, n))
    return {k: (statistics.median(h for h, _ in v), statistics.median(w for _, w in v)) for k, v in res.items()}

rows = []
cases = [(1024, 1024, 1024, "NN", 1), (7824, 632, 1360, "NT", 1), (576, 432, 1328, "NN", 1), (636, 3456, 3136, "NT", 1),
         (128, 3072, 768, "NT", 8), (1, 4096, 4096, "NT", 1), (4, 4096, 4096, "NT", 1), (2048, 2048, 2048, "NT", 1), (256, 256, 256, "NN", 1)]
for M, N, K, lay, Z in cases:
    shape = sweep.Shape(M, N, K, lay, Z) if Z > 1 else sweep.Shape(M, N, K, lay)
    a, b = sweep.operands(shape, torch.bfloat16)
    out = torch.empty(*((Z,) if Z > 1 else ()), M, N, dtype=torch.bfloat16, device="cuda")
    if Z > 1:
        fs = {"tritonmm": lambda: tritonmm.matmul(a, b, out=out), "torch": lambda: torch.bmm(a, b, out=out)}
    else:
        fs = {"tritonmm": lambda: tritonmm.mm(a, b, out=out), "torch": lambda: torch.mm(a, b, out=out)}
    fs["tritonmm"](); torch.cuda.synchronize()
    e = relaunch.cached(relaunch.key(a, b, out, None, "none", "native"))
    kind = "uncached" if e is None else f"launches={len(e.launches)} ws={e.workspace} parts={getattr(e, 'offsets', getattr(e, 'rows', None)) is not None} stage={e.stage is not None} desc={[l.descriptors is not None for l in e.launches]}"
    ref = (a.double() @ b.double()); err = ((out.double() - ref).norm() / ref.norm()).item()
    r = compare(fs)
    rows.append(dict(shape=f"{Z}x{M}x{N}x{K} {lay}", kind=kind, err=err, **{f"{k}_host": round(v[0], 1) for k, v in r.items()},
                     **{f"{k}_wall": round(v[1], 1) for k, v in r.items()}))
    print(TAG, rows[-1], flush=True)

# components, on the 1024 NN product
M = N = K = 1024
a = torch.randn(M, K, device="cuda").bfloat16(); b = torch.randn(K, N, device="cuda").bfloat16(); out = torch.empty(M, N, device="cuda").bfloat16()
tritonmm.mm(a, b, out=out)
k = relaunch.key(a, b, out, None, "none", "native"); e = relaunch.cached(k); stream = fast_launch.current_stream(0)
comp = {
    "relaunch.key": lambda: relaunch.key(a, b, out, None, "none", "native"),
    "is_capturing": torch.cuda.is_current_stream_capturing,
    "current_device": torch.cuda.current_device,
    "current_stream": lambda: fast_launch.current_stream(0),
    "thresholds.key": thresholds.key,
    "new_empty_strided": lambda: a.new_empty_strided((M, N), (N, 1)),
    "new_empty ws": lambda: a.new_empty((4, 544, 320), dtype=torch.float32),
    "torch.empty ws": lambda: torch.empty((4, 544, 320), dtype=torch.float32, device="cuda"),
    "a[0:512]": lambda: a[0:512],
    "Address": lambda: fast_launch.Address(a.data_ptr() + 4096),
    "launch only": lambda: e.launches[0]((a, b, out, None, None, None), stream),
    "relaunch.launch": lambda: relaunch.launch(e, a, b, out, None),
    "relaunch.lookup": lambda: relaunch.lookup(a, b, out, matrices=True),
    "tritonmm.mm": lambda: tritonmm.mm(a, b, out=out),
    "torch.mm": lambda: torch.mm(a, b, out=out),
}
cr = compare(comp, n=1000, rounds=3)
for name, (h, w) in cr.items():
    print(TAG, f"component {name:20s} host {h:6.2f} us  wall {w:6.2f}", flush=True)
pr = cProfile.Profile(); pr.enable()
for _ in range(2000): tritonmm.mm(a, b, out=out)
pr.disable(); s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
open(f"{OUT}/prof_{TAG}.txt", "w").write(s.getvalue())
json.dump(dict(rows=rows, components={k: v for k, v in cr.items()}), open(f"{OUT}/host_{TAG}.json", "w"), indent=1)
