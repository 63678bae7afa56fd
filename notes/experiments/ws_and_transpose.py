"""Experiment (2026-11-22): does Triton 3.6's warp specialization help the persistent TMA
kernel on Hopper; which GROUP_M/stages win for fp16; and can a Triton transpose beat
torch's transposing copy (~1.1 TB/s) for the TF32 K-major staging."""
import itertools

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.tools.tensor_descriptor import TensorDescriptor

from tritonmm import timing
from tritonmm.kernel import tile_coords


@triton.jit
def ws_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, WS_OUTER: tl.constexpr,
              WS_INNER: tl.constexpr, B_TRANS: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True,
                            warp_specialize=WS_OUTER):
        pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(tl.cdiv(K, BLOCK_K), warp_specialize=WS_INNER):
            a = a_desc.load([pid_m * BLOCK_M, ki * BLOCK_K])
            b = b_desc.load([pid_n * BLOCK_N, ki * BLOCK_K]).T if B_TRANS else b_desc.load([ki * BLOCK_K, pid_n * BLOCK_N])
            acc = tl.dot(a, b, acc)
        left, right = acc.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], left.to(c_desc.dtype))
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N + BLOCK_N // 2], right.to(c_desc.dtype))


def run_ws(a, b, c, cfg, ws_outer, ws_inner, b_trans=False):
    BM, BN, BK, stages, warps, group = cfg
    M, K = a.shape
    N = c.shape[1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    b_desc = TensorDescriptor.from_tensor(b, [BN, BK] if b_trans else [BK, BN])
    ws_kernel[(min(sms, triton.cdiv(M, BM) * triton.cdiv(N, BN)),)](
        TensorDescriptor.from_tensor(a, [BM, BK]), b_desc, TensorDescriptor.from_tensor(c, [BM, BN // 2]),
        M, N, K, BM, BN, BK, group, sms, ws_outer, ws_inner, b_trans, num_stages=stages, num_warps=warps)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, R, C, stride_xr, stride_yr, BLOCK: tl.constexpr):
    pid_r, pid_c = tl.program_id(0), tl.program_id(1)
    r = pid_r * BLOCK + tl.arange(0, BLOCK)
    c = pid_c * BLOCK + tl.arange(0, BLOCK)
    tile = tl.load(x_ptr + r[:, None] * stride_xr + c[None, :], mask=(r[:, None] < R) & (c[None, :] < C))
    tl.store(y_ptr + c[:, None] * stride_yr + r[None, :], tile.T, mask=(c[:, None] < C) & (r[None, :] < R))


def triton_transpose(x, block=64):
    R, C = x.shape
    y = torch.empty((C, R), dtype=x.dtype, device=x.device)
    transpose_kernel[(triton.cdiv(R, block), triton.cdiv(C, block))](x, y, R, C, x.stride(0), y.stride(0), block)
    return y


def main():
    rows = []
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    for n, dtype in itertools.product((4096, 8192), (torch.float16, torch.float32)):
        a = torch.randn(n, n, device="cuda").to(dtype)
        b = torch.randn(n, n, device="cuda").to(dtype)
        bt = b.T.contiguous()
        c = torch.empty(n, n, device="cuda", dtype=dtype)
        ref = a.double() @ b.double()
        cases = {"torch.mm": lambda: torch.mm(a, b, out=c)}
        if dtype == torch.float16:
            cfgs = [(128, 256, 64, 4, 8, g) for g in (4, 8, 16)] + [(128, 256, 64, 3, 8, 8)]
            b_trans = False
        else:
            cfgs = [(128, 256, 32, 3, 8, 8), (128, 128, 32, 5, 8, 8), (128, 128, 64, 3, 8, 8)]
            b_trans = True
        bb = bt if b_trans else b
        for cfg, (wo, wi) in itertools.product(cfgs, ((False, False), (True, False), (False, True))):
            cases[f"{cfg} ws_outer={wo} ws_inner={wi}"] = (lambda cf=cfg, o=wo, i=wi: run_ws(a, bb, c, cf, o, i, b_trans))
        for name, fn in cases.items():
            try:
                c.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                err = ((c.double() - ref).norm() / ref.norm()).item()
                ms = timing.median_ms(fn)
                rows.append([n, str(dtype), name, f"{ms:.3f}", f"{timing.tflops(n, n, n, ms):.0f}", f"{err:.1e}"])
            except Exception as e:
                rows.append([n, str(dtype), name, "-", "-", f"{type(e).__name__}: {str(e)[:60]}"])
            print(rows[-1], flush=True)
        if dtype == torch.float32:
            for name, fn in (("torch b.T.contiguous()", lambda: b.T.contiguous()),
                             ("triton transpose 64", lambda: triton_transpose(b, 64)),
                             ("triton transpose 32", lambda: triton_transpose(b, 32))):
                assert torch.equal(fn(), bt)
                ms = timing.median_ms(fn)
                rows.append([n, "copy", name, f"{ms:.3f}", f"{2 * b.numel() * 4 / ms / 1e9:.2f} TB/s", ""])
                print(rows[-1], flush=True)
    print(tabulate(rows, headers=["n", "dtype", "variant", "ms", "TFLOP/s", "err"]))


if __name__ == "__main__":
    main()
