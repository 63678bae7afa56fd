"""The functional API: torch.mm, torch.matmul and F.linear semantics on tritonmm's kernels.

Each function checks its arguments, resolves the float32 precision as torch would, and then
either calls plan.product directly (plain eager calls: no dispatcher cost) or, when
torch.compile is tracing or autograd needs a graph, the torch.library operators of
library.py, which carry the fake implementations and the gradient formulas.
"""
import math

import torch

from . import config_space, library, plan, validation  # noqa: F401  (library registers the operators)


def _records_grad(*tensors) -> bool:
    """Whether autograd records a gradient for this call (None stands for an absent bias)."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def _needs_op(*tensors) -> bool:
    """Compiling, or a gradient to record: go through the registered operator."""
    return torch.compiler.is_compiling() or _records_grad(*tensors)


def _common(dtype, config, input_precision):
    precision = plan.resolve_precision(dtype, validation.check_precision(input_precision))
    pinned = validation.check_config(config) if config is not None else None
    return precision, pinned


def _as_list(pinned):
    return None if pinned is None else config_space.as_list(pinned)


def _no_grad_out(out, *tensors):
    if out is not None and _records_grad(*tensors):
        raise ValueError("out= does not record a gradient, and an input requires one; call without out=, "
                         "or under torch.no_grad()")


def mm(a, b, *, out=None, config=None, input_precision=None):
    """C = a @ b for 2-D float16, bfloat16 or float32 tensors, exactly like torch.mm(a, b, out=out).

    Accumulates in fp32 and returns the inputs' dtype. float32 runs on TF32 tensor cores
    exactly when torch.mm would (torch.backends.cuda.matmul.fp32_precision, or the older
    allow_tf32 / set_float32_matmul_precision); ``input_precision="ieee"`` or ``"tf32"``
    overrides. ``config`` pins a tile config (a dict such as ``{"BLOCK_M": 128, "BLOCK_N":
    128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}`` or a triton.Config) and skips
    tuning; otherwise the config comes from the tuning cache, tuning, or a heuristic.
    """
    validation.check_mm_args(a, b, out)
    precision, pinned = _common(a.dtype, config, input_precision)
    _no_grad_out(out, a, b)
    return _mm(a, b, precision, pinned, out)


def _mm(a, b, precision, pinned, out=None):
    if _needs_op(a, b):
        c = torch.ops.tritonmm.mm(a, b, precision, _as_list(pinned))
        return c if out is None else out.copy_(c)
    return plan.product(a, b, precision=precision, out=out, config=pinned)


def _bmm(a, b, precision, pinned):
    if _needs_op(a, b):
        return torch.ops.tritonmm.bmm(a, b, precision, _as_list(pinned))
    return plan.product(a, b, precision=precision, config=pinned)


def matmul(a, b, *, out=None, config=None, input_precision=None):
    """a @ b with torch.matmul's rules, for float16, bfloat16 and float32 tensors of any dims.

    2-D @ 2-D is mm. A 1-D operand is a row (left) or column (right) vector whose dimension
    is removed from the result. N-D @ 1-D or 2-D folds the leading dims into M (a view where
    the strides allow, else a copy, as torch.matmul does). Otherwise the batch dims broadcast
    and every product of the batch runs in one launch, a broadcast operand read through a
    batch stride of 0. ``out``, ``config`` and ``input_precision`` as for mm.
    """
    validation.check_matmul_args(a, b)
    precision, pinned = _common(a.dtype, config, input_precision)
    _no_grad_out(out, a, b)
    if a.dim() == 2 and b.dim() == 2:
        if out is not None:
            validation.check_out(out, (a.shape[0], b.shape[1]), a, b)
        return _mm(a, b, precision, pinned, out)
    K = a.shape[-1]
    if b.dim() <= 2:  # fold a's leading dims into M
        c = _mm(a.reshape(math.prod(a.shape[:-1]), K), b if b.dim() == 2 else b.unsqueeze(1), precision, pinned)
        result = c.view((*a.shape[:-1], *b.shape[1:]))
    else:
        a_ = a.unsqueeze(0) if a.dim() == 1 else a
        M, N = a_.shape[-2], b.shape[-1]
        batch = torch.broadcast_shapes(a_.shape[:-2], b.shape[:-2])
        Z = math.prod(batch)
        c = _bmm(a_.expand(*batch, M, K).reshape(Z, M, K), b.expand(*batch, K, N).reshape(Z, K, N),
                 precision, pinned)
        result = c.view((*batch, *((M,) if a.dim() > 1 else ()), N))
    if out is None:
        return result
    validation.check_out(out, tuple(result.shape), a, b)
    return out.copy_(result)


def linear(x, weight, bias=None, activation=None, *, config=None, input_precision=None):
    """activation(x @ weight.T + bias), like torch.nn.functional.linear followed by the activation,
    with the bias add and the activation fused into the kernel's epilogue (in fp32, before the
    one cast to x's dtype). weight is (out_features, in_features); x has any leading dims.
    activation: None, "relu", "gelu" (erf), "gelu_tanh" or "silu".

    Under autograd the product runs with its bias fused and the activation in torch, so
    the backward pass reuses the saved pre-activation instead of recomputing the product.
    """
    activation = validation.check_linear_args(x, weight, bias, activation)
    precision, pinned = _common(x.dtype, config, input_precision)
    x2 = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    if _needs_op(x, weight, bias):
        fused = "none" if _records_grad(x, weight, bias) else activation
        y = torch.ops.tritonmm.linear(x2, weight, bias, fused, precision, _as_list(pinned))
        if fused != activation:
            y = plan.epilogue_reference(y, None, activation)
    else:
        y = plan.product(x2, weight.T, bias=bias, activation=activation, precision=precision, config=pinned)
    return y.view((*x.shape[:-1], weight.shape[0]))
