"""tritonmm: an autotuned Triton block-tiled matmul with torch.mm's semantics.

    from tritonmm import matmul
    c = matmul(a, b)            # a: (M, K), b: (K, N), float16 / bfloat16 / float32
"""
from .config_space import configs
from .matmul import matmul

__all__ = ["matmul", "configs"]
__version__ = "0.1.0"
