"""tritonmm: autotuned Triton block-tiled matrix products with PyTorch's semantics.

    import tritonmm
    c = tritonmm.mm(a, b)                  # torch.mm
    c = tritonmm.matmul(x, w)              # torch.matmul: N-D, batched, broadcast, 1-D
    y = tritonmm.linear(x, w, b, activation="gelu_tanh")   # F.linear + activation, fused
    layer = tritonmm.nn.Linear(1024, 4096)                  # a drop-in torch.nn.Linear
    with tritonmm.use_tritonmm():          # route aten mm/addmm/bmm of unchanged models here
        loss = model(x).sum()
"""
from . import nn
from .config_space import configs
from .ops import linear, matmul, mm
from .override import disable, enable, use_tritonmm

__all__ = ["matmul", "mm", "linear", "nn", "configs", "enable", "disable", "use_tritonmm"]
__version__ = "0.2.0"
