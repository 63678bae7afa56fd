"""cuBLAS's kernels (names carry tile and cluster) and times for the weak class, beside tritonmm's default plan."""
import torch, tritonmm
from tritonmm import planner
from bench import sweep
from bench.common import kernels_run, config_text
SHAPES = [(414, 18944, 3584, "NT"), (632, 6016, 1752, "NT"), (600, 3584, 3584, "NT"), (720, 3328, 1536, "NN"),
          (528, 4096, 14336, "NT"), (944, 5120, 13824, "NN"), (2960, 3072, 768, "NT"), (1536, 1536, 1536, "NN"),
          (960, 3232, 8112, "TN"), (224, 5696, 2656, "NT"), (144, 32000, 4096, "NT"), (3072, 768, 11832, "TN")]
for M, N, K, lay in SHAPES:
    a, b = sweep.operands(sweep.Shape(M, N, K, lay), torch.bfloat16)
    o = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    cfg, path = planner.chosen(a, b, "native", captured=True)
    print(f"{M}x{N}x{K} {lay}: cuBLAS {kernels_run(lambda: torch.mm(a, b, out=o))} | tritonmm {path} {config_text(cfg)}: "
          f"{kernels_run(lambda: tritonmm.mm(a, b, out=o))}", flush=True)
