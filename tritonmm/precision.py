"""Which dtypes tritonmm takes and at which precision a product runs.

16-bit and FP8 products run natively on tensor cores. A float32 product runs as IEEE fp32, on TF32
tensor cores, or as tf32x3 (three TF32 products that keep float32's accuracy): as the call asks, else
as ``set_float32_precision`` chose for the process, else as torch.mm would right now.
"""
import torch

SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2)
PRECISIONS = ("ieee", "tf32", "tf32x3")


@torch.compiler.assume_constant_result  # torch.compile reads the flag when it traces, as for torch.mm
def torch_uses_tf32() -> bool:
    """Whether torch.mm would run a float32 product on TF32 tensor cores right now."""
    matmul_flags = torch.backends.cuda.matmul
    precision = getattr(matmul_flags, "fp32_precision", None)  # torch >= 2.9
    if precision in ("tf32", "ieee"):
        return precision == "tf32"
    try:
        return bool(matmul_flags.allow_tf32)
    except RuntimeError:  # torch refuses to read the legacy flag once both APIs were used
        return torch.get_float32_matmul_precision() != "highest"


# set_float32_precision's choice for float32 products that name no precision; None follows torch.mm.
_float32 = {"precision": None}


def set_float32_default(precision) -> str | None:
    """Sets the process-wide precision of float32 products that name none (None: torch.mm's);
    returns the previous one. The caller checks the value (validation.check_precision)."""
    previous, _float32["precision"] = _float32["precision"], precision
    return previous


@torch.compiler.assume_constant_result  # read once when torch.compile traces, like torch's flag
def float32_default() -> str:
    """The precision of a float32 product that names none: the process-wide choice, else torch.mm's."""
    chosen = _float32["precision"]
    if chosen is not None:
        return chosen
    return "tf32" if torch_uses_tf32() else "ieee"


def resolve_precision(dtype: torch.dtype, input_precision) -> str:
    """'native' for 16-bit and FP8 inputs; for float32, 'ieee', 'tf32' or 'tf32x3': as asked, else the
    process-wide default (float32_default)."""
    if dtype != torch.float32:
        return "native"
    if input_precision is not None:
        return input_precision
    return float32_default()
