"""Multi-wave, long-K products (2-3 waves of 128x128 tiles, the last one part full; K >= 4096): every config the
tuner times, plus TMA split-K variants (2-4 slices) of every whole tile of 128x128 or more, against torch.mm, in
graph replay (tuning._time_all). Is the gap to cuBLAS in the candidate space or in the default's ranking?"""
import random, sys, torch
from tritonmm import config_space, device, tuning, timing
from tritonmm.splits import tma_slices
from bench import sweep, regret
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 2611)
n_shapes = int(sys.argv[2]) if len(sys.argv) > 2 else 6
widths = (3584, 4096, 5120, 13824, 14336, 18944)
shapes = []
while len(shapes) < n_shapes:
    M = rng.randint(200, 1600)
    if len(shapes) % 2 == 0:
        M = 8 * round(M / 8)
    N, K = rng.choice(widths), rng.choice(widths)
    tiles = -(-M // 128) * -(-N // 128)
    waves, left = divmod(tiles, 132)
    if 1 <= waves <= 3 and 0 < left < 0.6 * 132 and 2 * M * N * K < 4e11:
        shapes.append(sweep.Shape(M, N, K, rng.choice(["NN", "NT"]), kind="drawn"))
def one(shape):
    product = regret.product_of(shape, torch.bfloat16)
    default = product.heuristic()
    cands = product.candidates() or [default]
    extra = []
    if product.path == "tma":
        for c in cands:
            k = c.kwargs
            if k.get("SPLIT_K", 1) == 1 and not k.get("TAIL", 0) and min(k["BLOCK_M"], k["BLOCK_N"]) >= 128:
                extra += [config_space.variant(c, SPLIT_K=s) for s in tma_slices(shape.K, k["BLOCK_K"], 4)[1:]]
    allc = list(dict.fromkeys([default, *cands, *extra]))
    with device.on_device(product.device):
        times = tuning._time_all(product, allc, graph=True, progress=None)
    o = torch.empty(shape.M, shape.N, device="cuda", dtype=torch.bfloat16)
    aa, bb = sweep.operands(shape, torch.bfloat16)
    t_torch = timing.median_ms(lambda: torch.mm(aa, bb, out=o), graph=True)
    best = min(times, key=times.get)
    whole = min((c for c in times if config_space.split_k(c) == 1), key=times.get)
    splitc = [c for c in times if config_space.split_k(c) > 1]
    bsplit = min(splitc, key=times.get) if splitc else None
    t = lambda c: f"{times[c]*1e3:.1f}us x{t_torch/times[c]:.2f} {config_space.as_list(c)}"
    print(f"{shape.text} {shape.layout} {product.path}{'+staged' if product.staged else ''}: torch {t_torch*1e3:.1f}us"
          f"\n   default {t(default)}\n   best {t(best)}\n   best whole {t(whole)}" +
          (f"\n   best split {t(bsplit)}" if bsplit else ""), flush=True)
    for c in sorted(times, key=times.get)[:6]:
        print("     ", t(c))
for shape in shapes:
    try:
        one(shape)
    except Exception as e:
        print(shape.text, "FAILED", type(e).__name__, e, flush=True)
