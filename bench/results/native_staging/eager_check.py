"""Eager calls of unaligned products, torch.mm against tritonmm.mm(out=) (native dispatch built): back-to-back over
rotated operand copies, wall time a call (host time included), medians of 5 interleaved rounds of 300 calls."""
import statistics, torch, tritonmm
from tritonmm import planner, timing
from bench import sweep
from bench.common import copies
for s in (sweep.Shape(1146, 1146, 1146, "NN"), sweep.Shape(1125, 905, 1502, "NT"), sweep.Shape(700, 1800, 2046, "NT")):
    sets = [sweep.operands(s, torch.bfloat16) for _ in range(copies((s.M * s.K + s.K * s.N) * 2))]
    outs = {n: torch.empty(s.M, s.N, device="cuda", dtype=torch.bfloat16) for n in ("torch", "tritonmm")}
    fns = {"torch": lambda a, b: torch.mm(a, b, out=outs["torch"]), "tritonmm": lambda a, b: tritonmm.mm(a, b, out=outs["tritonmm"])}
    ref = sets[0][0].double() @ sets[0][1].double()
    fns["tritonmm"](*sets[0])
    err = ((outs["tritonmm"].double() - ref).norm() / ref.norm()).item()
    t = {n: [] for n in fns}
    for r in range(5):
        for n in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            t[n].append(timing.host_us_per_call(sweep.cycling(fns[n], sets), calls=300))
    us = {n: statistics.median(v) for n, v in t.items()}
    print(f"{s.text} {s.layout}: torch {us['torch']:.1f} us, tritonmm {us['tritonmm']:.1f} us, x {us['torch']/us['tritonmm']:.2f}; "
          f"plan {planner.chosen(*sets[0], 'native')[1]}; rel err {err:.1e}", flush=True)
