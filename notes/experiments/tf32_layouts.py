"""Experiment (2026-11-22): why TF32 with a row-major B is slow in Triton, and what helps.

wgmma reads 32-bit operands from shared memory only K-major; a row-major B (K x N) is
N-major, so Triton stages it through registers into a transposed copy. Variants timed:
  tritonmm NN           the library kernel, B row-major
  tritonmm NT           B a transposed view of a contiguous (N, K) tensor: K-major, the fast case
  transpose+NT          B.T.contiguous() first, then NT (what a library could do for NN)
  swap / swap-reg       C.T = B.T @ A.T inside the kernel, so B is the wgmma A operand,
                        which may come from registers (swap-reg forces that with an elementwise op)
Run on the device: PYTHONPATH=. python notes/experiments/tf32_layouts.py
"""
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

import tritonmm
from tritonmm import timing
from tritonmm.kernel import tile_coords


@triton.jit
def swap_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, REG_A: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
        for ki in range(tl.cdiv(K, BLOCK_K)):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            bt = b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N]).T
            if REG_A == 1:
                bt = bt + 0.0
            if REG_A == 2:
                bt = tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [bt], dtype=tl.float32,
                                               is_pure=True, pack=1)
            acc_t = tl.dot(bt, a.T, acc_t, input_precision="tf32")
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc_t.T)


def swap_matmul(a, b, c, reg_a, BM=128, BN=128, BK=32, stages=3, warps=8):
    M, K = a.shape
    N = b.shape[1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = (min(sms, triton.cdiv(M, BM) * triton.cdiv(N, BN)),)
    swap_kernel[grid](TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
                      TensorDescriptor.from_tensor(c, [BM, BN]), M, N, K, BM, BN, BK, 8, sms, reg_a,
                      num_stages=stages, num_warps=warps)
    return c


def main():
    from tabulate import tabulate
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    rows = []
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        bt_store = b.T.contiguous()  # (N, K) contiguous; bt_store.T is b as a K-major view
        ref = (a.double() @ b.double())
        c = torch.empty(n, n, device="cuda")
        cases = {
            "torch.mm": lambda: torch.mm(a, b, out=c),
            "tritonmm NN": lambda: tritonmm.matmul(a, b, out=c),
            "tritonmm NT": lambda: tritonmm.matmul(a, bt_store.T, out=c),
            "transpose+NT": lambda: tritonmm.matmul(a, b.T.contiguous().T, out=c),
        }
        for reg_a, name in ((0, "swap"), (1, "swap-reg(+0)"), (2, "swap-reg(cvt.rna)")):
            for cfg in ((128, 128, 32, 3, 8), (128, 256, 32, 2, 8), (128, 128, 32, 4, 4)):
                cases[f"{name} {cfg}"] = (lambda r=reg_a, cf=cfg: swap_matmul(a, b, c, r, *cf))
        for name, fn in cases.items():
            try:
                c.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                err = ((c.double() - ref).norm() / ref.norm()).item()
                ms = timing.median_ms(fn)
                rows.append([n, name, f"{ms:.3f}", f"{timing.tflops(n, n, n, ms):.0f}", f"{err:.1e}"])
            except Exception as e:  # a variant that does not compile is a result too
                rows.append([n, name, "-", "-", f"{type(e).__name__}: {str(e)[:80]}"])
            print(rows[-1], flush=True)
    print(tabulate(rows, headers=["n", "variant", "ms", "TFLOP/s", "rel err"]))


if __name__ == "__main__":
    main()
