"""What tl.dot's "tf32x3" does with special and extreme float32 values, against IEEE (session 4).

    PYTHONPATH=. python3 notes/experiments/tf32x3_special.py

Each row multiplies a 64x64 operand holding one special value by a random one, through
tritonmm's two kernel paths, and prints what lands in the affected row of C next to torch's
IEEE product. Also the relative error against float64 for operands scaled to a few ranges.
"""
import torch

import tritonmm
from tritonmm import plan


def row(x, y, precision):
    return tritonmm.mm(x, y, input_precision=precision)[0, :4].tolist()


def main():
    torch.manual_seed(0)
    b = torch.rand(64, 64, device="cuda") + 0.5  # positive: an inf stays an inf in IEEE
    print("special value in A[0, 0], B in [0.5, 1.5): C[0, :4]")
    for name, v in [("inf", float("inf")), ("-inf", float("-inf")), ("nan", float("nan")),
                    ("3.4e38", 3.4e38), ("1e-39 (subnormal)", 1e-39), ("1e-30", 1e-30)]:
        a = torch.rand(64, 64, device="cuda")
        a[0, :] = 0
        a[0, 0] = v
        for path, macs in (("pointer", float("inf")), ("tma", 0)):
            plan.TMA_MIN_MACS = macs
            plan.FEW_TILES_PER_SM = 0
            print(f"  {name:18} {path:8} ieee {row(a, b, 'ieee')[:2]} tf32x3 {row(a, b, 'tf32x3')[:2]}")
    plan.TMA_MIN_MACS = 2 ** 31
    print("relative Frobenius error against float64, 512^3, operands scaled by s")
    for s in (1.0, 1e-18, 1e-25, 1e18, 1e30):
        a = torch.randn(512, 512, device="cuda") * s
        c = torch.randn(512, 512, device="cuda")
        ref = a.double() @ c.double()
        errs = {p: ((tritonmm.mm(a, c, input_precision=p).double() - ref).norm() / ref.norm()).item()
                for p in ("ieee", "tf32", "tf32x3")}
        print(f"  s={s:g}: " + ", ".join(f"{p} {e:.1e}" for p, e in errs.items()))


if __name__ == "__main__":
    main()
