"""tritonmm's products as PyTorch operators: torch.library registration and autograd formulas.

Three operators, each ``torch.library.triton_op`` over plan.product, so torch.compile traces
through them to the Triton kernels (``wrap_triton``) with no graph break, and their fake
implementation comes from the same code run on fake tensors (a fourth, eager_product, is the
opaque way into a graph for products that take the TMA kernel: plan.product says why):

    tritonmm::mm(a, b, precision, config)                          a (M, K) @ b (K, N)
    tritonmm::bmm(a, b, precision, config)                         (Z, M, K) @ (Z, K, N)
    tritonmm::linear(x, weight, bias, activation, precision, config)   act(x @ weight.T + bias)

``precision`` is resolved by the caller (ops.py), so a compiled graph keeps the one it was
traced with; ``config`` is a pinned tile as a list of ints (config_space.as_list) or None.
Each has an autograd formula through the same operators, the gradients of a product read
as transposed views (no copies). ops.py calls these only when compiling or when autograd
needs them; plain eager calls go to plan.product directly and pay no dispatch.
"""
from typing import Optional, Sequence

import torch

from . import config_space, plan, validation


def _register(name: str):
    """torch.library.triton_op on a GPU. In the CPU interpreter no tracer can see a kernel, so
    there the operator is an opaque custom_op (compiled graphs call it as it is), with the
    same function as its fake implementation (plan.launcher skips launches on fake tensors)."""
    def register(fn):
        if not validation.interpreting():
            return torch.library.triton_op(name, mutates_args=())(fn)
        op = torch.library.custom_op(name, mutates_args=())(fn)
        op.register_fake(fn)
        return op
    return register


def _pinned(config):
    return None if config is None else config_space.from_list(config)


@_register("tritonmm::mm")
def mm(a: torch.Tensor, b: torch.Tensor, precision: str, config: Optional[Sequence[int]] = None) -> torch.Tensor:
    return plan.product(a, b, precision=precision, config=_pinned(config))


@_register("tritonmm::bmm")
def bmm(a: torch.Tensor, b: torch.Tensor, precision: str, config: Optional[Sequence[int]] = None) -> torch.Tensor:
    return plan.product(a, b, precision=precision, config=_pinned(config))


@_register("tritonmm::linear")
def linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], activation: str, precision: str,
           config: Optional[Sequence[int]] = None) -> torch.Tensor:
    return plan.product(x, weight.T, bias=bias, activation=activation, precision=precision,
                        config=_pinned(config))


@torch.library.custom_op("tritonmm::eager_product", mutates_args=())
def eager_product(a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor], activation: str, precision: str,
                  config: Optional[Sequence[int]] = None) -> torch.Tensor:
    """plan.product, run when a compiled graph runs rather than traced into it: the graph's
    path for products that take the TMA kernel (plan.product says why). Opaque to inductor,
    so it keeps tritonmm's own path choice, tuned configs and launch cache."""
    return plan.product(a, b, bias=bias, activation=activation, precision=precision, config=_pinned(config))


@eager_product.register_fake
def _(a, b, bias, activation, precision, config=None):
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.custom_op("tritonmm::scaled_mm", mutates_args=())
def scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
              bias: Optional[torch.Tensor], out_dtype: torch.dtype) -> torch.Tensor:
    """ops.scaled_mm inside a compiled graph: opaque, run by the planner when the graph runs (FP8
    products take the TMA kernel, which does not trace; plan.product says why). No gradient:
    FP8 products are for inference, as torch._scaled_mm's."""
    return plan.product(a, b, precision="native", bias=bias, scales=(scale_a, scale_b), out_dtype=out_dtype)


@scaled_mm.register_fake
def _(a, b, scale_a, scale_b, bias, out_dtype):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _setup_product(ctx, inputs, output):
    a, b, precision, _ = inputs
    ctx.save_for_backward(a, b)
    ctx.precision = precision


def _mm_backward(ctx, grad):
    # dA = dC @ B.T and dB = A.T @ dC, through tritonmm on transposed views.
    a, b = ctx.saved_tensors
    op = torch.ops.tritonmm.mm if a.dim() == 2 else torch.ops.tritonmm.bmm
    da = op(grad, b.mT, ctx.precision) if ctx.needs_input_grad[0] else None
    db = op(a.mT, grad, ctx.precision) if ctx.needs_input_grad[1] else None
    return da, db, None, None


def _setup_linear(ctx, inputs, output):
    x, weight, bias, activation, precision, _ = inputs
    ctx.save_for_backward(x, weight, bias)
    ctx.activation, ctx.precision = activation, precision


_ACTIVATION_BACKWARD = {
    "relu": lambda g, z: torch.ops.aten.threshold_backward(g, z, 0),
    "gelu": lambda g, z: torch.ops.aten.gelu_backward(g, z, approximate="none"),
    "gelu_tanh": lambda g, z: torch.ops.aten.gelu_backward(g, z, approximate="tanh"),
    "silu": lambda g, z: torch.ops.aten.silu_backward(g, z),
}


def _linear_backward(ctx, grad):
    x, weight, bias = ctx.saved_tensors
    if ctx.activation != "none":
        # The pre-activation is recomputed here. ops.linear avoids this cost under autograd by
        # running the product unfused and the activation in torch, which saves it instead.
        z = torch.ops.tritonmm.linear(x, weight, bias, "none", ctx.precision)
        grad = _ACTIVATION_BACKWARD[ctx.activation](grad, z)
    dx = torch.ops.tritonmm.mm(grad, weight, ctx.precision) if ctx.needs_input_grad[0] else None
    dw = torch.ops.tritonmm.mm(grad.T, x, ctx.precision) if ctx.needs_input_grad[1] else None
    db = grad.sum(0, dtype=torch.float32).to(bias.dtype) if bias is not None and ctx.needs_input_grad[2] else None
    return dx, dw, db, None, None, None


mm.register_autograd(_mm_backward, setup_context=_setup_product)
bmm.register_autograd(_mm_backward, setup_context=_setup_product)
linear.register_autograd(_linear_backward, setup_context=_setup_linear)
