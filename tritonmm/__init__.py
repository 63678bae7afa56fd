"""tritonmm: autotuned Triton block-tiled matrix products with PyTorch's semantics.

    import tritonmm
    c = tritonmm.mm(a, b)                  # torch.mm
    c = tritonmm.matmul(x, w)              # torch.matmul: N-D, batched, broadcast, 1-D
    y = tritonmm.linear(x, w, b, activation="gelu_tanh")   # F.linear + activation, fused
    layer = tritonmm.nn.Linear(1024, 4096)                  # a drop-in torch.nn.Linear
    c = tritonmm.mm(a, b, input_precision="tf32x3")        # float32 accuracy on tensor cores
    y = tritonmm.scaled_mm(qa, qb, sa, sb)                  # FP8 with scales (quantize_fp8)
    with tritonmm.use_tritonmm():          # route aten mm/addmm/bmm of unchanged models here
        loss = model(x).sum()
"""
from . import nn
from .config_space import configs
from .ops import linear, matmul, mm, quantize_fp8, scaled_mm, set_float32_precision
from .override import disable, enable, use_tritonmm
from .tuning import autotuning

__all__ = ["matmul", "mm", "linear", "nn", "configs", "enable", "disable", "use_tritonmm", "set_float32_precision",
           "scaled_mm", "quantize_fp8", "autotuning"]
__version__ = "0.2.0"
