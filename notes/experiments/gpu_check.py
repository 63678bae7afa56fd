"""Quick correctness sweep on the GPU (before the pytest suite existed)."""
import itertools
import torch
import tritonmm
from tritonmm.tune import operands
from tritonmm.matmul import Launch, resolve_precision

bad = 0
for dt, (M, N, K), lay in itertools.product((torch.float16, torch.bfloat16, torch.float32),
                                            ((33, 65, 31), (1, 7, 1), (127, 129, 257), (256, 512, 128), (1000, 24, 1032)),
                                            ("NN", "TN", "NT", "TT")):
    a, b = operands(M, N, K, dt, lay)
    c = torch.full((M, N), float("nan"), dtype=dt, device="cuda")
    tritonmm.matmul(a, b, out=c)
    ref = a.double() @ b.double()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    path = Launch(a, b, c, resolve_precision(dt, None)).path
    ok = err < (1e-2 if dt != torch.float32 else 1e-4)
    bad += not ok
    print(dt, M, N, K, lay, path, f"{err:.2e}", "ok" if ok else "FAIL", flush=True)
print("failures:", bad)
