"""Long-K products of few waves (an LM head's dX = dY @ W, K the vocabulary; drawn): the planner's pick (Gluon or the
tl TMA kernel), and on the tl TMA kernel whole tiles, the wave-tail split and split-K in 2-16 slices of 128x256 and
128x128 tiles, against torch.mm, CUDA-graph replay (tuning._time_all; device time)."""
import random, sys, torch, tritonmm
from tritonmm import config_space, device, tuning, timing, planner
from tritonmm.splits import tma_slices
from bench import sweep, regret
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 2621)
n_shapes = int(sys.argv[2]) if len(sys.argv) > 2 else 6
shapes = [sweep.Shape(1088, 4096, 128256, "NN", kind="seen")]
while len(shapes) < n_shapes:
    M = rng.randint(256, 2048)
    if len(shapes) % 2 == 0:
        M = 8 * round(M / 8)
    N, K = rng.choice((3584, 4096, 5120, 8192)), rng.choice((32000, 32768, 65536, 128256, 152064))
    if 2 * M * N * K < 3e12:
        shapes.append(sweep.Shape(M, N, K, "NN", kind="drawn"))
def one(shape):
    product = regret.product_of(shape, torch.bfloat16)
    default = product.heuristic()
    cands = product.candidates()
    bases = []
    for bm, bn in ((128, 256), (128, 128)):
        whole = [c for c in cands if c.kwargs["BLOCK_M"] == bm and c.kwargs["BLOCK_N"] == bn and
                 config_space.split_k(c) == 1 and not c.kwargs.get("TAIL", 0)]
        if whole:
            bases.append(whole[0])
    allc = [default]
    for c in bases:
        allc += [c, config_space.variant(c, TAIL=1)]
        allc += [config_space.variant(c, SPLIT_K=s) for s in (2, 3, 4, 5, 6, 8, 11, 16)
                 if s in tma_slices(shape.K, c.kwargs["BLOCK_K"], 16)]
    allc = list(dict.fromkeys(allc))
    with device.on_device(product.device):
        times = tuning._time_all(product, allc, graph=True, progress=None)
    aa, bb = sweep.operands(shape, torch.bfloat16)
    o = torch.empty(shape.M, shape.N, device="cuda", dtype=torch.bfloat16)
    t_torch = timing.median_ms(lambda: torch.mm(aa, bb, out=o), graph=True)
    t_plan = timing.median_ms(lambda: tritonmm.matmul(aa, bb, out=o), graph=True)
    chosen = planner.chosen(aa, bb, "native", captured=True)
    ref = aa[:64].double() @ bb.double()
    err = ((o[:64].double() - ref).norm() / ref.norm()).item()
    t = lambda c: f"{times[c]*1e3:.1f}us x{t_torch/times[c]:.2f} {config_space.as_list(c)}"
    print(f"{shape.text} {shape.kind}: torch {t_torch*1e3:.1f}us; planner {t_plan*1e3:.1f}us x{t_torch/t_plan:.2f} "
          f"{chosen[1]} {config_space.as_list(chosen[0])} err {err:.1e}; default {t(default)}", flush=True)
    for c in sorted(times, key=times.get)[:8]:
        print("     ", t(c))
for shape in shapes:
    try:
        one(shape)
    except Exception as e:
        print(shape.text, "FAILED", type(e).__name__, e, flush=True)
