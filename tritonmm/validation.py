"""Argument checks for tritonmm.matmul: every bad input becomes a TypeError or ValueError
that names the argument and says how to fix it, before anything is launched."""
import functools
import os

import torch

SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
PRECISIONS = ("ieee", "tf32")
_DTYPE_NAMES = "torch.float16, torch.bfloat16 or torch.float32"


@functools.lru_cache(maxsize=None)
def interpreting() -> bool:
    """True when Triton runs kernels on the CPU (TRITON_INTERPRET=1, read when triton is imported)."""
    from .kernel import matmul_kernel
    return type(matmul_kernel).__name__ == "InterpretedFunction"


def _check_tensor(name: str, t) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {t.dim()}-D shape {tuple(t.shape)}; "
                         f"reshape it, or use torch.matmul for batched products")
    if t.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{name} has dtype {t.dtype}; tritonmm supports {_DTYPE_NAMES}: "
                        f"convert it with {name}.to(torch.float32), or use torch.mm for {t.dtype}")


def _check_device(name: str, t: torch.Tensor) -> None:
    if t.device.type == "cuda":
        return
    if t.device.type == "cpu":
        if interpreting():
            return
        raise ValueError(f"{name} is on the CPU; move it to the GPU with {name}.cuda(), or run "
                         f"Triton's interpreter on the CPU by setting TRITON_INTERPRET=1 before "
                         f"triton is imported")
    raise ValueError(f"{name} is on {t.device}; tritonmm runs on CUDA devices (or on the CPU "
                     f"with TRITON_INTERPRET=1)")


def _byte_range(t: torch.Tensor):
    """[first, last + 1) bytes a 2-D tensor touches (torch strides are never negative)."""
    (rows, cols), (row_stride, col_stride) = t.shape, t.stride()
    if rows == 0 or cols == 0:
        return None
    start = t.data_ptr()
    return start, start + ((rows - 1) * row_stride + (cols - 1) * col_stride + 1) * t.element_size()


def _overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    rx, ry = _byte_range(x), _byte_range(y)
    return rx is not None and ry is not None and rx[0] < ry[1] and ry[0] < rx[1]


def check_config(config):
    """A pinned config: a triton.Config or a dict of tile and launch parameters. Returns a triton.Config."""
    import triton

    from .config_space import LAUNCH_PARAMS, TILE_PARAMS, make_config
    if isinstance(config, triton.Config):
        params = dict(config.kwargs, num_warps=config.num_warps, num_stages=config.num_stages)
    elif isinstance(config, dict):
        params = dict(config)
    else:
        raise TypeError(f"config must be a dict or a triton.Config, got {type(config).__name__}")
    unknown = set(params) - set(TILE_PARAMS) - set(LAUNCH_PARAMS)
    if unknown:
        raise ValueError(f"config has unknown keys {sorted(unknown)}; use {TILE_PARAMS + LAUNCH_PARAMS}")
    missing = {"BLOCK_M", "BLOCK_N", "BLOCK_K"} - set(params)
    if missing:
        raise ValueError(f"config is missing {sorted(missing)}; give at least BLOCK_M, BLOCK_N and BLOCK_K")
    params.setdefault("GROUP_M", 8)
    params.setdefault("num_warps", 4)
    params.setdefault("num_stages", 3)
    for key, value in params.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"config[{key!r}] must be a positive int, got {value!r}")
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps"):
        v = params[key]
        if v & (v - 1):
            raise ValueError(f"config[{key!r}] must be a power of two, got {v}")
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        if params[key] < 16:
            raise ValueError(f"config[{key!r}] must be at least 16 (tl.dot's smallest tile), got {params[key]}")
    return make_config(**params)


def check_precision(input_precision):
    if input_precision is None:
        return None
    if input_precision not in PRECISIONS:
        raise ValueError(f"input_precision must be None, 'ieee' or 'tf32', got {input_precision!r}")
    return input_precision


def check_matmul_args(a, b, out):
    """Checks a, b and out= as torch.mm(a, b, out=out) would take them."""
    _check_tensor("a", a)
    _check_tensor("b", b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; "
                         f"a.shape[1] must equal b.shape[0] (transpose one with .T?)")
    if a.dtype != b.dtype:
        raise TypeError(f"a is {a.dtype} but b is {b.dtype}; convert one so both have the same dtype")
    if a.device != b.device:
        raise ValueError(f"a is on {a.device} but b is on {b.device}; move both to one device")
    _check_device("a", a)
    if out is None:
        return
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"out must be a torch.Tensor or None, got {type(out).__name__}")
    shape = (a.shape[0], b.shape[1])
    if tuple(out.shape) != shape:
        raise ValueError(f"out has shape {tuple(out.shape)} but a @ b is {shape}; allocate "
                         f"torch.empty({shape}, dtype={a.dtype}, device='{a.device}')")
    if out.dtype != a.dtype:
        raise TypeError(f"out has dtype {out.dtype} but the inputs are {a.dtype}; the result has the inputs' dtype")
    if out.device != a.device:
        raise ValueError(f"out is on {out.device} but the inputs are on {a.device}; allocate it on {a.device}")
    for name, t in (("a", a), ("b", b)):
        if _overlaps(out, t):
            raise ValueError(f"out overlaps input {name} in memory, so the kernel would read what it "
                             f"writes; pass a separate output tensor")
    if out.numel() > 1 and 0 in out.stride():
        raise ValueError("out has a zero stride (an expanded view), so several results would land in one "
                         "element; pass a tensor made with torch.empty")


def autotune_enabled(default: bool) -> bool:
    value = os.environ.get("TRITONMM_AUTOTUNE")
    if value is None or value == "":
        return default
    if value not in ("0", "1"):
        raise ValueError(f"TRITONMM_AUTOTUNE must be 0 or 1, got {value!r}")
    return value == "1"
