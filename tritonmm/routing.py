"""Which products use_tritonmm() gives tritonmm: the tensors, shapes and out= buffers it takes, and
the precision they run at. The aten override (override.py) asks for every call it intercepts; the
graph pass (inductor_pass.py) asks of the fake tensors in a compiled graph's metadata.

On a GPU the switch takes CUDA tensors. In Triton's interpreter (TRITON_INTERPRET=1, how the tests
run without a GPU) it takes CPU tensors too, so that the routing runs where CI can see it.
"""
import torch

from . import validation
from .precision import SUPPORTED_DTYPES, resolve_precision


def dispatch_keys() -> tuple:
    """The dispatch keys the override registers for: CUDA, and CPU where Triton interprets kernels
    (the device kinds takes_tensors accepts)."""
    return ("CUDA", "CPU") if validation.interpreting() else ("CUDA",)


def shapes_ok(a, b, dims: int) -> bool:
    """The shapes aten's mm (dims 2) or bmm (dims 3) accepts. Anything else goes to aten, which
    raises its own error: the kernels below this layer assume checked arguments."""
    return a.dim() == b.dim() == dims and a.shape[-1] == b.shape[-2] and a.shape[:-2] == b.shape[:-2]


def takes_tensors(*tensors) -> bool:
    """Whether tritonmm runs on these tensors (operands, bias, out; fake tensors too, which the graph
    pass asks about): one supported dtype, all on one device of a kind the override registers for."""
    first = tensors[0]
    kind = first.device.type
    if first.dtype not in SUPPORTED_DTYPES or not (kind == "cuda" or (kind == "cpu" and validation.interpreting())):
        return False
    for t in tensors:  # a loop, not all(): every eager product asks, and a generator costs more
        if t.dtype != first.dtype or t.device != first.device:
            return False
    return True


def default_precision(dtype: torch.dtype) -> str:
    """The precision a product of this dtype that names none runs at now: torch.mm's (and
    set_float32_precision's) choice for float32, "native" for 16-bit."""
    return resolve_precision(dtype, None)


def writable(out: torch.Tensor, shape: tuple, inputs) -> bool:
    """out= as torch.compile'd code passes it: the result's shape, no two elements at one address, and
    no memory shared with an input. Anything else goes to aten, which does what torch does with it
    (resizes a wrong shape, refuses an overlap)."""
    if tuple(out.shape) != shape:
        return False
    # Strides from smallest up: each must step past everything the smaller ones reach.
    reach = 0
    for stride, size in sorted((s, n) for n, s in zip(out.shape, out.stride()) if n > 1):
        if stride <= reach:
            return False
        reach += (size - 1) * stride
    storage = out.untyped_storage().data_ptr()
    return all(t.untyped_storage().data_ptr() != storage for t in inputs)


def takes(a, b, *others, dims: int, out=None) -> bool:
    """Whether tritonmm computes this product: takes_tensors, shapes_ok, and an out= it can write."""
    if out is None:
        return takes_tensors(a, b, *others) and shapes_ok(a, b, dims)
    return (takes_tensors(a, b, *others, out) and shapes_ok(a, b, dims)
            and writable(out, (*a.shape[:-1], b.shape[-1]), (a, b, *others)))
