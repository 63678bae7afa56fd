"""Argument checks for the public ops: every bad input becomes a TypeError or ValueError that
names the argument and says how to fix it, before anything is launched."""
import os
import re

import torch
from torch._subclasses.fake_tensor import is_fake

from . import device
from .config_space import LAUNCH_PARAMS, MAX_PER_SM, MIN_TILE_SIDE, TILE_PARAMS, make_config
from .splits import MAX_SPLIT_K
from .kernels import overlaps
from .kernels.gemm import gemm_kernel
from .kernels.tiles import ACTIVATIONS
from .precision import FP8_DTYPES, PRECISIONS, SUPPORTED_DTYPES

_DTYPE_NAMES = "torch.float16, torch.bfloat16 or torch.float32"


# Triton reads TRITON_INTERPRET once, when it is imported: whether it runs kernels on the CPU
# is fixed for the process, and a constant costs nothing to ask (and traces under Dynamo).
_INTERPRETING = type(gemm_kernel).__name__ == "InterpretedFunction"


def interpreting() -> bool:
    """True when Triton runs kernels on the CPU (TRITON_INTERPRET=1, read when triton is imported)."""
    return _INTERPRETING


# Triton 3.6's interpreter vs NumPy >= 2.4. The interpreter holds every scalar as a shape-(1,)
# NumPy array (integer kernel arguments, program ids), and while a kernel runs it gives
# tl.tensor an __index__ (in triton.runtime.interpreter._patch_lang_tensor) that does
# `int(self.handle.data)`: what `range(K)`, a shape or a Python index of a scalar calls.
# NumPy 2.4 turned int() of an array with ndim > 0 from a DeprecationWarning into a TypeError
# ("only 0-dimensional arrays can be converted to Python scalars"), so on triton 3.6 nearly every
# kernel fails under the interpreter. Triton 3.7 fixed it with `int(self.handle.data.squeeze())`;
# for older Triton the interpreter's _patch_lang_tensor is wrapped to put that fix in place right
# after it runs, through the same undo scope, so the kernel's end restores tl.tensor as before.
# Only __index__ changes; nothing is done where Triton's internals differ from what is expected.
def _triton_minor_version(version) -> tuple | None:
    """(major, minor) from a version string such as "3.6.0", "3.6.0+git1a2b3c" or "3.10.0rc1";
    None where it does not start with two numbers."""
    match = re.match(r"\s*(\d+)\.(\d+)", version) if isinstance(version, str) else None
    return (int(match[1]), int(match[2])) if match else None


def _needs_index_shim(version) -> bool:
    """True for a Triton older than 3.7, whose interpreter calls int() on shape-(1,) arrays."""
    parsed = _triton_minor_version(version)
    return parsed is not None and parsed < (3, 7)


def _squeezed_index(self) -> int:
    """tl.tensor.__index__ as Triton 3.7's interpreter has it: a shape-(1,) array as its scalar."""
    return int(self.handle.data.squeeze())


def _wrap_patch_lang_tensor(interpreter_module) -> bool:
    """Wraps interpreter_module._patch_lang_tensor so that tl.tensor's __index__ squeezes its
    handle's array. Idempotent; never raises. Returns whether the wrapper is in place."""
    try:
        original = getattr(interpreter_module, "_patch_lang_tensor", None)
        if original is None or not callable(original):
            return False
        if getattr(original, "_tritonmm_squeezed_index", False):
            return True  # already wrapped

        def _patch_lang_tensor(tensor, *args, **kwargs):
            result = original(tensor, *args, **kwargs)
            try:
                if "__index__" in vars(tensor):  # the interpreter's, for this launch (tl.tensor has none of its own)
                    scope = args[0] if args else kwargs.get("scope")
                    if callable(getattr(scope, "set_attr", None)):
                        scope.set_attr(tensor, "__index__", _squeezed_index)  # undone with the interpreter's
                    else:
                        setattr(tensor, "__index__", _squeezed_index)
            except Exception:  # internals not as expected: leave what the interpreter set
                pass
            return result

        _patch_lang_tensor._tritonmm_squeezed_index = True
        _patch_lang_tensor.__wrapped__ = original
        interpreter_module._patch_lang_tensor = _patch_lang_tensor
        return True
    except Exception:
        return False


def _apply_interpreter_index_shim() -> bool:
    """Puts the wrapper in place when kernels run in Triton's interpreter and Triton is older
    than 3.7. Runs when this module is imported, which `import tritonmm` does (through nn, ops and
    config_space) before anything can launch; the interpreter patches tl.tensor anew at each
    launch, so every kernel launched from then on, tritonmm's or not, gets the fix."""
    if not interpreting():
        return False
    try:
        import triton
        if not _needs_index_shim(getattr(triton, "__version__", None)):
            return False
        import triton.runtime.interpreter as interpreter_module
    except Exception:
        return False
    return _wrap_patch_lang_tensor(interpreter_module)


_apply_interpreter_index_shim()


def traced(t: torch.Tensor) -> bool:
    """True for the fake tensors torch.compile traces with: no memory, nothing to time. (A plain
    torch.Tensor is never fake; asking its type first keeps eager calls cheap.)"""
    return type(t) is not torch.Tensor and is_fake(t)


def _check_tensor(name: str, t, dims=(2,)) -> None:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() not in dims:
        if dims == (2,):
            raise ValueError(f"{name} must be a 2-D matrix, got {t.dim()}-D shape {tuple(t.shape)}; "
                             f"reshape it, or use tritonmm.matmul for batched products")
        wanted = f"at least {dims.start}" if isinstance(dims, range) else " or ".join(map(str, dims))
        raise ValueError(f"{name} must have {wanted} dimensions, got {t.dim()}-D shape {tuple(t.shape)}")
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


def check_config(config):
    """A pinned config: a triton.Config or a dict of tile and launch parameters. Returns a triton.Config."""
    import triton

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
    if params.get("TAIL", 1) not in (0, 1) or isinstance(params.get("TAIL"), bool):
        raise ValueError(f"config['TAIL'] must be 1 (the last wave's rows on smaller tiles) or 0, got {params['TAIL']!r}")
    if params.get("TAIL") == 0:
        del params["TAIL"]
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
    rows = params["BLOCK_M"] < MIN_TILE_SIDE  # the row kernel (kernels/gemv.py), BLOCK_M rows a program: any BLOCK_N
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        if params[key] < MIN_TILE_SIDE and not (rows and key != "BLOCK_K"):
            raise ValueError(f"config[{key!r}] must be at least {MIN_TILE_SIDE} (tl.dot's smallest tile), "
                             f"got {params[key]}; BLOCK_M of 1, 2, 4 or 8 pins the row kernel, which takes any BLOCK_N")
    if rows and (params.get("SPLIT_K", 1) != 1 or params.get("TAIL") or params.get("PER_SM", 1) != 1):
        raise ValueError(f"config with BLOCK_M={params['BLOCK_M']} (the row kernel) takes no SPLIT_K, TAIL or PER_SM; "
                         "remove them")
    if params.get("PER_SM", 1) > MAX_PER_SM:
        raise ValueError(f"config['PER_SM'] (the TMA kernel's persistent programs an SM) must be at most {MAX_PER_SM}, "
                         f"got {params['PER_SM']}")
    if params.get("SPLIT_K", 1) > MAX_SPLIT_K:
        raise ValueError(f"config['SPLIT_K'] must be at most {MAX_SPLIT_K}, got {params['SPLIT_K']}")
    return make_config(**params)


def check_precision(input_precision):
    if input_precision is None:
        return None
    if input_precision not in PRECISIONS:
        raise ValueError(f"input_precision must be None, 'ieee', 'tf32' or 'tf32x3', got {input_precision!r}")
    return input_precision


def _check_pair(a, b, a_name="a", b_name="b"):
    """Same dtype, same device, a device tritonmm runs on."""
    if a.dtype != b.dtype:
        raise TypeError(f"{a_name} is {a.dtype} but {b_name} is {b.dtype}; convert one so both have the same dtype")
    if a.device != b.device:
        raise ValueError(f"{a_name} is on {a.device} but {b_name} is on {b.device}; move both to one device")
    _check_device(a_name, a)


def check_mm_args(a, b, out):
    """Checks a, b and out= as torch.mm(a, b, out=out) would take them."""
    _check_tensor("a", a)
    _check_tensor("b", b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; "
                         f"a.shape[1] must equal b.shape[0] (transpose one with .T?)")
    _check_pair(a, b)
    if out is not None:
        check_out(out, (a.shape[0], b.shape[1]), a, b)


def check_matmul_args(a, b):
    """Checks a and b as torch.matmul(a, b) would take them (any dims >= 1, broadcast batch)."""
    for name, t in (("a", a), ("b", b)):
        _check_tensor(name, t, dims=range(1, 64))
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.dim() == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; a's last "
                         f"dimension must equal b's {'only' if b.dim() == 1 else 'second-to-last'} one")
    batch_a, batch_b = a.shape[:-2], b.shape[:-2] if b.dim() > 1 else ()
    try:
        torch.broadcast_shapes(batch_a, batch_b)
    except RuntimeError:
        raise ValueError(f"batch dimensions {tuple(batch_a)} of a and {tuple(batch_b)} of b do not broadcast; "
                         f"each pair of sizes must be equal or 1") from None
    _check_pair(a, b)


def check_linear_args(x, weight, bias, activation) -> str:
    """Checks torch.nn.functional.linear's arguments and the activation to fuse; returns the
    activation's name ("none" for None). The activation first: its error does not depend on
    where the tensors are."""
    activation = check_activation(activation)
    _check_tensor("x", x, dims=range(1, 64))
    _check_tensor("weight", weight)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"x has {x.shape[-1]} features in its last dimension but weight is "
                         f"{tuple(weight.shape)} (out_features, in_features); they must match")
    _check_pair(x, weight, "x", "weight")
    if bias is not None:
        _check_tensor("bias", bias, dims=(1,))
        if bias.shape[0] != weight.shape[0]:
            raise ValueError(f"bias has {bias.shape[0]} elements but weight has {weight.shape[0]} output "
                             f"features; pass a bias of shape ({weight.shape[0]},)")
        _check_pair(x, bias, "x", "bias")
    return activation


OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def check_scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype):
    """Checks tritonmm.scaled_mm's arguments: FP8 matrices, float32 scales of one value or one
    per row of a / column of b, a (N,) bias, an output dtype, a GPU with FP8 tensor cores."""
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got {t.dim()}-D shape {tuple(t.shape)}")
        if t.dtype not in FP8_DTYPES:
            raise TypeError(f"{name} has dtype {t.dtype}; scaled_mm multiplies torch.float8_e4m3fn or "
                            f"torch.float8_e5m2 matrices: quantize it with tritonmm.quantize_fp8({name})")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)} and b is {tuple(b.shape)}; "
                         f"a.shape[1] must equal b.shape[0]")
    if a.device != b.device:
        raise ValueError(f"a is on {a.device} but b is on {b.device}; move both to one device")
    _check_device("a", a)
    M, N = a.shape[0], b.shape[1]
    for name, s, vector in (("scale_a", scale_a, (M, 1)), ("scale_b", scale_b, (1, N))):
        if not isinstance(s, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(s).__name__}")
        if s.dtype != torch.float32:
            raise TypeError(f"{name} has dtype {s.dtype}; scales are torch.float32: {name}.float()")
        if s.device != a.device:
            raise ValueError(f"{name} is on {s.device} but a is on {a.device}; move it to {a.device}")
        if s.numel() != 1 and tuple(s.shape) != vector:
            raise ValueError(f"{name} has shape {tuple(s.shape)}; give one value (shape () or (1,)) for the "
                             f"whole operand, or one per {'row of a' if name == 'scale_a' else 'column of b'}, "
                             f"shape {vector}")
    if bias is not None:
        _check_tensor("bias", bias, dims=(1,))
        if bias.shape[0] != N:
            raise ValueError(f"bias has {bias.shape[0]} elements but the product has {N} columns; "
                             f"pass a bias of shape ({N},)")
        if bias.device != a.device:
            raise ValueError(f"bias is on {bias.device} but a is on {a.device}; move it to {a.device}")
    if out_dtype not in OUT_DTYPES:
        raise TypeError(f"out_dtype must be torch.bfloat16, torch.float16 or torch.float32, got {out_dtype}")
    if a.device.type == "cuda":
        check_fp8_support(a.device, device.facts(a.device))


def check_fp8_support(device, facts):
    if not facts.fp8:
        raise ValueError(f"{device} ({facts.name}) has no FP8 tensor cores: scaled_mm needs compute "
                         f"capability 8.9 or newer (Ada, Hopper); dequantize and use tritonmm.mm instead")


def check_activation(activation):
    name = "none" if activation is None else activation
    if name not in ACTIVATIONS:
        raise ValueError(f"activation must be None or one of {ACTIVATIONS[1:]}, got {activation!r}")
    return name


def check_out(out, shape, a, b):
    """out= of a product: the right shape, dtype and device, and no overlap with the inputs."""
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"out must be a torch.Tensor or None, got {type(out).__name__}")
    if tuple(out.shape) != shape:
        raise ValueError(f"out has shape {tuple(out.shape)} but a @ b is {shape}; allocate "
                         f"torch.empty({shape}, dtype={a.dtype}, device='{a.device}')")
    if out.dtype != a.dtype:
        raise TypeError(f"out has dtype {out.dtype} but the inputs are {a.dtype}; the result has the inputs' dtype")
    if out.device != a.device:
        raise ValueError(f"out is on {out.device} but the inputs are on {a.device}; allocate it on {a.device}")
    if traced(out) or torch.compiler.is_compiling():
        return  # no memory to compare while torch.compile traces (Dynamo cannot read data_ptr)
    for name, t in (("a", a), ("b", b)):
        if overlaps(out, t):
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
