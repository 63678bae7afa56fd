"""The device check of the Gluon tf32x3 kernel (tritonmm/kernels/gluon_tf32x3.py), for an H100 with Triton >= 3.8:

    python -m bench.gluon_tf32x3 [--rounds 3] [--shape 4096x4096x4096 ...]

1. Correctness: odd, non-square shapes, into an out filled with NaN, with and without the consumers' turns
   (PINGPONG); the relative Frobenius error against float64 (bound 1e-5), and a second run must give the same bits.
2. Timing (the house method, bench.common: read-flushed device-time medians over operand copies rotated past the
   L2, implementations interleaved, medians of the rounds), x IEEE SGEMM (torch.mm):
   - "gluon kernel" and "gluon kernel, turns": the kernel alone on split operands, as shipped (the consumers each
     at their own pace) and with PINGPONG's strict turns;
   - "tritonmm": tritonmm.mm(input_precision="tf32x3") as shipped (the split copies, then the Gluon kernel);
   - "tritonmm, tl kernel": the same with rules.gluon_tf32x3 off (thresholds gluon_tf32x3=False): the split copies,
     then gemm_tma.py's PRESPLIT kernel, at its default config.
Prints the versions first and a table last; exits non-zero where the kernel cannot run or a result is wrong (the
checks, and the timed rows whose first operand set is checked against float64).
"""
import argparse
import itertools
import statistics
import sys

import torch

SHAPES = [(1, 4, 4), (130, 264, 520), (2047, 3000, 1032), (300, 8, 4100), (4099, 260, 8), (777, 1236, 333)]
TIMED = ["4096x4096x4096", "8192x8192x8192"]
BOUND = 1e-5  # tests/test_precision.py's for tf32x3


def check() -> bool:
    from tritonmm import staging
    from tritonmm.kernels import gluon_tf32x3
    from .common import rel_err
    ok = True
    for M, N, K in SHAPES:
        a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
        split, ref = (staging.split_a(a), staging.split_b(b)), a.double() @ b.double()
        for pingpong in (True, False):
            out = torch.full((M, N), float("nan"), device="cuda")
            first = gluon_tf32x3.run(*split, out, pingpong)[0].clone()
            gluon_tf32x3.run(*split, out.fill_(float("nan")), pingpong)
            err, same = rel_err(out, ref), torch.equal(first, out)
            ok &= err < BOUND and same
            print(f"check {M}x{N}x{K} {'turns' if pingpong else 'as shipped'}: rel err {err:.1e}"
                  + ("" if same else ", a rerun gave other bits"), flush=True)
    return ok


def timed(M: int, N: int, K: int, rounds: int) -> list:
    """Rows (name, ms, TFLOP/s, x SGEMM, rel err of the first operand set) for one shape."""
    import tritonmm
    from tritonmm import staging, thresholds, timing
    from tritonmm.kernels import gluon_tf32x3
    from .common import REF_MAX_MACS, copies, interleaved_times, rel_err
    sets = []
    for _ in range(copies((M * K + K * N) * 4)):
        a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
        sets.append((a, b, staging.split_a(a), staging.split_b(b), torch.empty(M, N, device="cuda")))

    def shipped(s, **changes):
        with thresholds.override(**changes):
            tritonmm.mm(s[0], s[1], out=s[4], input_precision="tf32x3")
    fns = {"SGEMM (torch.mm)": lambda s: torch.mm(s[0], s[1], out=s[4]),
           "gluon kernel": lambda s: gluon_tf32x3.run(s[2], s[3], s[4], False),
           "gluon kernel, turns": lambda s: gluon_tf32x3.run(s[2], s[3], s[4], True),
           "tritonmm": shipped,
           "tritonmm, tl kernel": lambda s: shipped(s, gluon_tf32x3=False)}
    ref = sets[0][0].double() @ sets[0][1].double() if M * N * K <= REF_MAX_MACS else None
    errs = {}
    for name, fn in fns.items():
        fn((*sets[0][:4], sets[0][4].fill_(float("nan"))))
        errs[name] = rel_err(sets[0][4], ref) if ref is not None else None
    times = interleaved_times({name: (lambda fn=fn, c=itertools.cycle(sets): fn(next(c))) for name, fn in fns.items()},
                              rounds)
    ms = {name: statistics.median(t) for name, t in times.items()}
    base = ms["SGEMM (torch.mm)"]
    return [(name, v, timing.tflops(M, N, K, v), base / v, errs[name]) for name, v in ms.items()]


def main(argv=None) -> int:
    from .gluon_check import can_run
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shape", action="append", help="MxNxK to time (default: 4096^3 and 8192^3)")
    args = parser.parse_args(argv)
    if not can_run("the Gluon tf32x3 kernel"):
        return 2
    torch.backends.cuda.matmul.fp32_precision = "ieee"  # torch.mm's float32 is IEEE SGEMM here
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name()}, {sms} SMs", flush=True)
    ok = check()
    rows = []
    for text in args.shape or TIMED:
        M, N, K = (int(x) for x in text.split("x"))
        rows += [(text, *row) for row in timed(M, N, K, args.rounds)]
    print(f"\n{'shape':16s} {'implementation':24s} {'ms':>8s} {'TFLOP/s':>8s} {'x SGEMM':>8s} {'rel err':>8s}")
    for shape, name, ms, tflops, ratio, err in rows:
        ok &= err is None or err < BOUND  # the timed operands' first set, where float64 is cheap
        print(f"{shape:16s} {name:24s} {ms:8.3f} {tflops:8.1f} {ratio:8.3f} {'-' if err is None else f'{err:.1e}':>8s}")
    print("correct" if ok else "WRONG")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
