"""Which operand's row alignment costs tritonmm time: a product timed with contiguous operands, then with A, B
or C (and all three) as views of buffers whose rows are padded to 64 elements (128 bytes of bf16), sizes
unchanged. Rows that are 16-byte but not 128-byte aligned (a size that is a multiple of 8, not of 64) are
what TMA reads and writes here; cuBLAS is timed the same two ways beside it.

    python -m bench.alignment                       # the default shapes, bf16
    python -m bench.alignment --shape 5176x4648x2456 --layout NT --rounds 3

Device time of CUDA-graph replays over operand copies rotated past the L2 (bench.common.device_ms),
every variant timed once per round, in turn; medians of the rounds, in us.
"""
import argparse
import statistics

import torch

import tritonmm
from tritonmm.precision import resolve_precision

from .common import config_text, copies, device_ms, rel_err
from .sweep import _graph

PAD = 64  # elements: 128 bytes of a 16-bit row
# Multiples of 8 but not of 64 in every size, both layouts of the weight; the first four are the sizes that
# showed the cost first, the rest new.
SHAPES = [(5176, 4648, 2456, "NN"), (2576, 3480, 2192, "NN"), (648, 1912, 4088, "NN"), (5560, 808, 1016, "NN"),
          (3016, 4712, 1800, "NT"), (1048, 5128, 4104, "NT"), (7160, 2040, 3064, "NN")]
VARIANTS = ("contiguous", "A padded", "B padded", "C padded", "all padded")


def padded(rows: int, cols: int, dtype, pad: bool) -> torch.Tensor:
    """A (rows, cols) tensor of random normal values, a view of rows PAD-padded where asked."""
    width = -(-cols // PAD) * PAD if pad else cols
    return torch.randn(rows, width, device="cuda").to(dtype)[:, :cols]


def operands(M, N, K, layout, dtype, pad_a, pad_b):
    """(a, b): a (M, K); b (K, N) row-major ("NN"), or the transposed view of an (N, K) weight ("NT")."""
    a = padded(M, K, dtype, pad_a)
    b = padded(K, N, dtype, pad_b) if layout == "NN" else padded(N, K, dtype, pad_b).T
    return a, b


def measure(M, N, K, layout, dtype=torch.bfloat16, rounds: int = 3) -> dict:
    """{variant: (tritonmm us, torch us or None, tritonmm's config and path, rel err)} for one shape."""
    nsets = copies((M * K + K * N) * dtype.itemsize)
    # A graph holds its tensors' addresses, not the tensors: every variant's operands and outputs stay
    # referenced here until the last replay.
    graphs, info, alive = {}, {}, []
    for variant in VARIANTS:
        pad_a = variant in ("A padded", "all padded")
        pad_b = variant in ("B padded", "all padded")
        pad_c = variant in ("C padded", "all padded")
        sets = [operands(M, N, K, layout, dtype, pad_a, pad_b) for _ in range(nsets)]
        out = padded(M, N, dtype, pad_c).fill_(float("nan"))
        alive.append((sets, out))
        names = [("tritonmm", lambda a, b, out=out: tritonmm.mm(a, b, out=out))]
        if variant in ("contiguous", "all padded"):
            ref_out = padded(M, N, dtype, pad_c)
            alive.append(ref_out)
            names.append(("torch", lambda a, b, out=ref_out: torch.mm(a, b, out=out)))
        for impl, call in names:
            graphs[(variant, impl)] = _graph(call, sets)
        a, b = sets[-1]
        cfg, path = tritonmm.planner.chosen(a, b, resolve_precision(dtype, None), captured=True)
        torch.cuda.synchronize()
        info[variant] = (f"{config_text(cfg)} {path}", rel_err(out, a.double() @ b.double()))
    times = {key: [] for key in graphs}
    for _ in range(rounds):
        for key, graph in graphs.items():
            times[key].append(device_ms(graph.replay) * 1e3 / nsets)
    med = {key: statistics.median(t) for key, t in times.items()}
    return {v: (med[(v, "tritonmm")], med.get((v, "torch")), *info[v]) for v in VARIANTS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable); default: SHAPES")
    parser.add_argument("--layout", default="NN", choices=("NN", "NT"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        parser.exit(3, "bench.alignment times kernels: it needs a CUDA GPU\n")
    shapes = [(*map(int, s.lower().split("x")), args.layout) for s in args.shape] if args.shape else SHAPES
    print("shape layout | variant | tritonmm us | torch us | x torch (contiguous) | config path | rel err")
    for M, N, K, layout in shapes:
        rows = measure(M, N, K, layout, rounds=args.rounds)
        base_torch = rows["contiguous"][1]
        for variant, (ours, theirs, cfg, err) in rows.items():
            torch_text = "" if theirs is None else f"{theirs:8.1f}"
            print(f"{M}x{N}x{K} {layout} | {variant:10} | {ours:8.1f} | {torch_text:>8} | "
                  f"{base_torch / ours:5.2f} | {cfg} | {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
