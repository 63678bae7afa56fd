"""Experiment (2026-11-22, session 2): the two issue-2 gaps.

TF32, B row-major (N-major), 4096^3: tritonmm copies B K-major (0.05 ms) and then matches
cuBLAS, so it lands at 0.86-0.87x. Two ways past the copy are timed here:
  * swap-RS: C.T = B.T @ A.T inside the kernel. B.T is the wgmma A operand, which may come
    from registers in any layout, so no copy is needed. An elementwise op forces it into
    registers (Triton otherwise keeps it in shared memory, where tf32 must be K-major).
    Session 1 got 203-209 TFLOP/s with 128-row tiles; here wider tiles (wgmma N = 256),
    BLOCK_K 16/32, persistent or not.
  * bigger tiles on the K-major kernel: 128x256x32 TF32 tiles pull ~8 TB/s from L2 at
    364 TFLOP/s; 256x256 tiles (16 warps) need a third less per flop.
  Each variant: relative error against float64 and bitwise repeatability over 3 runs
  (Triton's RS pipelining has a ptxas register hazard before ptxas 13.3, triton#9433).

fp16, 4096^3: 0.93-0.95x while bf16 on the same config reaches 0.97-1.03x. A config sweep,
measured in interleaved rounds (every variant once per round, 3 rounds) so that clock
drift hits all variants alike, with the SM clock and power sampled alongside.

Run on the device: PYTHONPATH=. python3 notes/experiments/tf32_rs_and_fp16.py [tf32] [fp16]
"""
import statistics
import subprocess
import sys

import torch
import triton
import triton.language as tl
from tabulate import tabulate
from triton.tools.tensor_descriptor import TensorDescriptor

import tritonmm
from tritonmm import timing
from tritonmm.kernel import tile_coords


@triton.jit
def store_tile(c_desc, c, off_m, off_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SPLIT: tl.constexpr):
    c = c.to(c_desc.dtype)
    if SPLIT == 1:
        c_desc.store([off_m, off_n], c)
    else:
        left, right = c.reshape(BLOCK_M, 2, BLOCK_N // 2).permute(0, 2, 1).split()
        if SPLIT == 2:
            c_desc.store([off_m, off_n], left)
            c_desc.store([off_m, off_n + BLOCK_N // 2], right)
        else:
            q0, q1 = left.reshape(BLOCK_M, 2, BLOCK_N // 4).permute(0, 2, 1).split()
            q2, q3 = right.reshape(BLOCK_M, 2, BLOCK_N // 4).permute(0, 2, 1).split()
            c_desc.store([off_m, off_n], q0)
            c_desc.store([off_m, off_n + BLOCK_N // 4], q1)
            c_desc.store([off_m, off_n + BLOCK_N // 2], q2)
            c_desc.store([off_m, off_n + 3 * BLOCK_N // 4], q3)


@triton.jit
def one_tile(a_desc, b_desc, c_desc, tile_id, num_pid_m, num_pid_n, k_tiles,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
             SWAP: tl.constexpr, FORCE: tl.constexpr, SPLIT: tl.constexpr, WS_INNER: tl.constexpr):
    pid_m, pid_n = tile_coords(tile_id, num_pid_m, num_pid_n, GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    if SWAP >= 2:  # b_desc covers B (K x N, N-major); plain A @ B, B staged by Triton (2) or forced (3)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(k_tiles, warp_specialize=WS_INNER):
            a = a_desc.load([off_m, ki * BLOCK_K])
            b = b_desc.load([ki * BLOCK_K, off_n])
            if SWAP == 3:
                b = b + 0.0
            acc = tl.dot(a, b, acc, input_precision="tf32")
        store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, SPLIT)
    elif SWAP == 1:  # b_desc covers B (K x N, N-major); accumulate C.T
        acc_t = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
        for ki in tl.range(k_tiles, warp_specialize=WS_INNER):
            a = a_desc.load([off_m, ki * BLOCK_K])
            bt = b_desc.load([ki * BLOCK_K, off_n]).T
            if FORCE == 1:
                bt = bt + 0.0
            if FORCE == 2:
                bt = tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [bt], dtype=tl.float32,
                                               is_pure=True, pack=1)
            acc_t = tl.dot(bt, a.T, acc_t, input_precision="tf32")
        store_tile(c_desc, acc_t.T, off_m, off_n, BLOCK_M, BLOCK_N, SPLIT)
    else:  # b_desc covers B.T (N x K, K-major)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in tl.range(k_tiles, warp_specialize=WS_INNER):
            a = a_desc.load([off_m, ki * BLOCK_K])
            b = b_desc.load([off_n, ki * BLOCK_K]).T
            acc = tl.dot(a, b, acc, input_precision="tf32")
        store_tile(c_desc, acc, off_m, off_n, BLOCK_M, BLOCK_N, SPLIT)


@triton.jit
def exp_kernel(a_desc, b_desc, c_desc, M, N, K,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
               SWAP: tl.constexpr, FORCE: tl.constexpr, SPLIT: tl.constexpr, PERSISTENT: tl.constexpr,
               FLATTEN: tl.constexpr, NUM_SMS: tl.constexpr, WS_INNER: tl.constexpr, WS_OUTER: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    if PERSISTENT:
        for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=FLATTEN,
                                warp_specialize=WS_OUTER):
            one_tile(a_desc, b_desc, c_desc, tile_id, num_pid_m, num_pid_n, k_tiles,
                     BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SWAP, FORCE, SPLIT, WS_INNER)
    else:
        one_tile(a_desc, b_desc, c_desc, tl.program_id(0), num_pid_m, num_pid_n, k_tiles,
                 BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, SWAP, FORCE, SPLIT, WS_INNER)


def exp_matmul(a, b_src, c, cfg, swap, force=1, split=2, persistent=True, flatten=True, ws_inner=False,
               ws_outer=False):
    """swap: 0 K-major (b_src is B.T, N x K contiguous), 1 swap-RS, 2 NN as compiled, 3 NN with B
    forced through registers (b_src is B, K x N row-major)."""
    BM, BN, BK, stages, warps = cfg
    M, K = a.shape
    N = c.shape[1]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    b_desc = TensorDescriptor.from_tensor(b_src, [BK, BN] if swap else [BN, BK])
    swap = int(swap)
    exp_kernel[(min(sms, tiles) if persistent else tiles,)](
        TensorDescriptor.from_tensor(a, [BM, BK]), b_desc, TensorDescriptor.from_tensor(c, [BM, BN // split]),
        M, N, K, BM, BN, BK, 8, swap, force, split, persistent, flatten, sms, ws_inner, ws_outer,
        num_stages=stages, num_warps=warps)
    return c


def check_and_time(name, fn, c, ref, rows, n):
    try:
        outs = []
        for _ in range(3):
            c.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            outs.append(c.clone())
        err = ((outs[0].double() - ref).norm() / ref.norm()).item()
        same = all(torch.equal(outs[0], o) for o in outs[1:])
        ms = timing.median_ms(fn)
        rows.append([n, name, f"{ms:.4f}", f"{timing.tflops(n, n, n, ms):.0f}", f"{err:.1e}", "yes" if same else "NO"])
    except Exception as e:  # a variant that does not compile or launch is a result too
        rows.append([n, name, "-", "-", f"{type(e).__name__}: {str(e).splitlines()[0][:70]}", "-"])
    print(rows[-1], flush=True)


def tf32():
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    rows = []
    plain = [((128, 256, 32, 3, 8), 2), ((256, 128, 32, 3, 8), 2), ((256, 256, 16, 4, 16), 4),
             ((256, 256, 32, 2, 16), 4), ((256, 256, 16, 3, 16), 4)]
    swap = [(256, 128, 32, 3, 8), (256, 128, 16, 5, 8), (128, 128, 32, 4, 8), (256, 64, 32, 4, 4),
            (128, 256, 32, 3, 8), (256, 256, 16, 4, 16)]
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        bt = b.T.contiguous()
        c = torch.empty(n, n, device="cuda")
        ref = a.double() @ b.double()
        check_and_time("torch.mm", lambda: torch.mm(a, b, out=c), c, ref, rows, n)
        check_and_time("tritonmm NN (copy + kernel)", lambda: tritonmm.matmul(a, b, out=c), c, ref, rows, n)
        check_and_time("tritonmm, B K-major", lambda: tritonmm.matmul(a, bt.T, out=c), c, ref, rows, n)
        for cfg, split in plain:
            check_and_time(f"K-major {cfg} split{split}",
                           lambda cf=cfg, s=split: exp_matmul(a, bt, c, cf, False, split=s), c, ref, rows, n)
        for cfg in swap:
            split = 4 if cfg[1] == 256 else 2
            for persistent, flatten in ((True, True), (False, False)):
                mode = "persistent" if persistent else "one tile"
                check_and_time(f"swap-RS {cfg} {mode}",
                               lambda cf=cfg, p=persistent, f=flatten, s=split: exp_matmul(a, b, c, cf, True, 1, s, p, f),
                               c, ref, rows, n)
        for cfg in swap[:2]:
            check_and_time(f"swap-RS cvt.rna {cfg} one tile",
                           lambda cf=cfg: exp_matmul(a, b, c, cf, True, 2, 2, False, False), c, ref, rows, n)
    print(tabulate(rows, headers=["n", "variant", "ms", "TFLOP/s", "rel err", "repeatable"]))


def staging():
    """NN TF32 with B N-major in the kernel: does warp specialization hide Triton's staging of B?"""
    torch.backends.cuda.matmul.fp32_precision = "tf32"
    rows = []
    n = 4096
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    c = torch.empty(n, n, device="cuda")
    ref = a.double() @ b.double()
    check_and_time("torch.mm", lambda: torch.mm(a, b, out=c), c, ref, rows, n)
    check_and_time("tritonmm NN (copy + kernel)", lambda: tritonmm.matmul(a, b, out=c), c, ref, rows, n)
    for mode, name in ((2, "NN as compiled"), (3, "NN B+0.0"), (1, "swap-RS")):
        for cfg in ((128, 256, 32, 3, 8), (128, 128, 32, 4, 8), (128, 128, 32, 3, 4)):
            for p, wi, wo in ((False, False, False), (False, True, False), (True, False, True), (True, True, False)):
                tag = ("persistent" if p else "one tile") + (" ws-inner" if wi else "") + (" ws-outer" if wo else "")
                check_and_time(f"{name} {cfg} {tag}",
                               lambda m=mode, cf=cfg, p=p, wi=wi, wo=wo: exp_matmul(a, b, c, cf, m, 1, 2, p, False, wi, wo),
                               c, ref, rows, n)
    print(tabulate(rows, headers=["n", "variant", "ms", "TFLOP/s", "rel err", "repeatable"]))


def fp16():
    cfgs = [(128, 256, 64, 4, 8, g) for g in (1, 4, 8, 16, 32)] + [
        (128, 256, 64, 3, 8, 8), (256, 128, 64, 4, 8, 8), (256, 128, 64, 3, 8, 8),
        (128, 256, 128, 2, 8, 8), (256, 256, 64, 2, 16, 8), (128, 128, 64, 5, 4, 8), (128, 128, 128, 4, 8, 8)]
    sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                                "--format=csv,noheader", "-lms", "200"], stdout=subprocess.PIPE, text=True)
    times = {}
    cases = {}
    for n in (4096, 8192):
        x = torch.randn(n, n, device="cuda")
        y = torch.randn(n, n, device="cuda")
        for dtype in (torch.float16, torch.bfloat16):
            a, b = x.to(dtype), y.to(dtype)
            c = torch.empty(n, n, device="cuda", dtype=dtype)
            ref = a.double() @ b.double()
            cases[(n, dtype, "torch.mm")] = (lambda a=a, b=b, c=c: torch.mm(a, b, out=c))
            for cfg in cfgs:
                BM, BN, BK, st, w, g = cfg
                pin = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=g, num_stages=st, num_warps=w)
                fn = (lambda a=a, b=b, c=c, p=pin: tritonmm.matmul(a, b, out=c, config=p))
                try:
                    c.fill_(float("nan"))
                    fn()
                    torch.cuda.synchronize()
                    err = ((c.double() - ref).norm() / ref.norm()).item()
                    assert err < 1e-2, err
                    cases[(n, dtype, str(cfg))] = fn
                except Exception as e:
                    print(n, dtype, cfg, "failed:", type(e).__name__, str(e).splitlines()[0][:80], flush=True)
    for rnd in range(3):
        for key, fn in cases.items():
            times.setdefault(key, []).append(timing.median_ms(fn))
        print("round", rnd, "done", flush=True)
    sampler.terminate()
    samples = sampler.communicate()[0].strip().splitlines()
    rows = []
    for (n, dtype, name), ms in times.items():
        torch_ms = statistics.median(times[(n, dtype, "torch.mm")])
        med = statistics.median(ms)
        rows.append([n, str(dtype).split(".")[1], name, f"{timing.tflops(n, n, n, med):.0f}",
                     f"{torch_ms / med:.3f}", f"{min(ms):.4f}-{max(ms):.4f}"])
    print(tabulate(rows, headers=["n", "dtype", "impl", "TFLOP/s", "x torch", "ms range (3 rounds)"]))
    clocks = [int(s.split(",")[0].split()[0]) for s in samples if s.strip()]
    powers = [float(s.split(",")[1].split()[0]) for s in samples if s.strip()]
    print(f"SM clock MHz min/median/max {min(clocks)}/{statistics.median(clocks)}/{max(clocks)}; "
          f"power W median/max {statistics.median(powers):.0f}/{max(powers):.0f}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["tf32", "fp16"]
    from triton.backends.nvidia.compiler import get_ptxas_version
    print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(),
          "| bundled", get_ptxas_version().strip().splitlines()[-1])
    for part in parts:
        globals()[part]()
