"""Stream-K against the data-parallel TMA kernel, the pointer kernel and cuBLAS (session 6).

For each bf16 shape: every config of the 16-bit space timed by the tuner (CUDA-graph replay, the
operands L2-resident for every implementation alike) on the TMA kernel, data-parallel and
stream-K (the variant the tuner adds where the last wave is poorly filled), and on the pointer
kernel (with its split-K variants); torch.mm timed the same way. Prints the best of each, the
error of the best stream-K config against float64 and whether two runs agree bit for bit, then a
per-config table of stream-K's gain with the config's wave efficiency (for the heuristic's bound).

    PYTHONPATH=. python3 notes/experiments/stream_k.py [--quick]
"""
import sys

import torch
from tabulate import tabulate

import tritonmm
from tritonmm import config_space, plan, timing, tuning
from tritonmm.tune import operands

QUICK = "--quick" in sys.argv
SHAPES = [  # (M, N, K, layout)
    (768, 768, 768, "NN"), (1024, 1024, 1024, "NN"), (1280, 1280, 1280, "NN"), (1536, 1536, 1536, "NN"),
    (2048, 2048, 2048, "NN"), (2560, 2560, 2560, "NN"), (3072, 3072, 3072, "NN"), (3000, 3008, 3000, "NN"),
    (4096, 4096, 4096, "NN"), (512, 4096, 4096, "NT"), (1024, 4096, 4096, "NT"), (256, 14336, 4096, "NT"),
    (2048, 4096, 14336, "NT"), (6144, 6144, 6144, "NN"),
]
if QUICK:
    SHAPES = SHAPES[3:4] + SHAPES[6:8]


def tuned(a, b, tma: bool):
    plan.TMA_MIN_MACS = 0 if tma else float("inf")
    plan.FEW_TILES_PER_SM = 0 if tma else 0.5
    launch = plan.Product(a, b, torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device="cuda"), "native")
    assert launch.path == ("tma" if tma else "pointer"), launch.path
    _, times = tuning.tune(launch)
    return times


rows, pairs = [], []
for M, N, K, layout in SHAPES:
    a, b = operands(M, N, K, torch.bfloat16, layout, "cuda")
    cublas = timing.median_ms(lambda: torch.mm(a, b), rep_ms=25, graph=True)
    tma = tuned(a, b, True)
    ptr = tuned(a, b, False) if M * N * K <= 2 ** 33 else {}
    dp = {c: ms for c, ms in tma.items() if not config_space.stream_k(c)}
    sk = {c: ms for c, ms in tma.items() if config_space.stream_k(c)}
    best_dp = min(dp, key=dp.get)
    row = [f"{M}x{N}x{K} {layout}", f"{cublas * 1e3:.1f}", f"{cublas / min(ptr.values()):.2f}" if ptr else "-",
           f"{cublas / dp[best_dp]:.2f}"]
    if sk:
        best_sk = min(sk, key=sk.get)
        plan.TMA_MIN_MACS, plan.FEW_TILES_PER_SM = 0, 0
        pinned = dict(best_sk.kwargs, num_warps=best_sk.num_warps, num_stages=best_sk.num_stages)
        out = tritonmm.mm(a, b, config=pinned)
        ref = a.double() @ b.double()
        err = ((out.double() - ref).norm() / ref.norm()).item()
        same = all(torch.equal(out, tritonmm.mm(a, b, config=pinned)) for _ in range(3))
        row += [f"{cublas / sk[best_sk]:.2f}", f"{err:.1e}", same]
        for c, ms in sk.items():
            plain = config_space.make_config(num_warps=c.num_warps, num_stages=c.num_stages,
                                             **config_space.kernel_params(c))
            if plain in dp:
                eff = config_space.wave_efficiency(plain, M, N, 132)
                pairs.append([f"{M}x{N}x{K}", f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']}x{c.kwargs['BLOCK_K']} "
                              f"s{c.num_stages} w{c.num_warps}", f"{eff:.2f}", f"{dp[plain] / ms:.2f}"])
    else:
        row += ["-", "-", "-"]
    k = best_dp.kwargs
    row.append(f"{k['BLOCK_M']}x{k['BLOCK_N']} s{best_dp.num_stages}")
    rows.append(row)
    print(*row, flush=True)
print(tabulate(pairs, headers=["shape", "config", "wave eff", "SK / DP speed"], disable_numparse=True))
print(tabulate(rows, headers=["shape", "cuBLAS us", "pointer x", "TMA DP x", "TMA SK x", "SK err", "deterministic",
                              "best DP"], disable_numparse=True))
