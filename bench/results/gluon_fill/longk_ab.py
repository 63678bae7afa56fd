"""Fresh long-K products of few waves (K 32000-152064, M 256-2048, N 3584-8192; seed 2641, never drawn): the planner
as shipped (gluon_min_fill 0.9) against gluon_min_fill=0 (Gluon for every product of its class), bench.ab.measure:
CUDA-graph replay over rotated operands, interleaved rounds, checked against float64."""
import random, sys
from bench import ab, sweep
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 2641)
shapes = []
while len(shapes) < (int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    M = rng.randint(256, 2048)
    if len(shapes) % 2 == 0:
        M = 8 * round(M / 8)
    N, K = rng.choice((3584, 4096, 5120, 8192)), rng.choice((32000, 32768, 65536, 128256, 152064))
    if 2 * M * N * K < 3e12:
        shapes.append(sweep.Shape(M, N, K, rng.choice(("NN", "NT")), kind="drawn"))
rows = []
for shape in shapes:
    dtype = rng.choice(("bf16", "fp16"))
    r = ab.measure(shape, dtype, {"gluon_min_fill": 0.0}, 3)
    rows.append(r)
    x = {w: r["us"]["torch"] / r["us"][w] for w in ("shipped", "changed")}
    print(f"{dtype} {shape.text} {shape.layout}: torch {r['us']['torch']:.1f} us | shipped {x['shipped']:.3f} "
          f"[{r['plans']['shipped']}] | fill 0 {x['changed']:.3f} [{r['plans']['changed']}] ok {r['ok']}", flush=True)
print("\n".join(ab.summary(rows)))
