"""tritonmm's products as PyTorch operators: torch.library registration and autograd formulas.

Three operators, each ``torch.library.triton_op`` over planner.product, so torch.compile traces
through them to the Triton kernels (``wrap_triton``) with no graph break, and their fake
implementation comes from the same code run on fake tensors (two more, eager_product and
scaled_mm, are opaque ways into a graph, for products that take the TMA kernel or split K, for
every product where torch cannot read Triton's kernels (TRACE_KERNELS), for every product
inductor_pass.py rewrites, and for FP8 products: _planned says why):

    tritonmm::mm(a, b, precision, config)                          a (M, K) @ b (K, N)
    tritonmm::bmm(a, b, precision, config)                         (Z, M, K) @ (Z, K, N)
    tritonmm::linear(x, weight, bias, activation, precision, config)   act(x @ weight.T + bias)

``precision`` is resolved by the caller (ops.py), so a compiled graph keeps the one it was
traced with; ``config`` is a pinned tile as a list of ints (config_space.as_list) or None.
Each has an autograd formula, the gradients of a product read as transposed views (no copies).
The same functions and formulas also make a torch.autograd.Function per operator (``apply``): eager
calls that record a gradient take it, since the operator's dispatch and its Python autograd wrapper
cost more host time (design.md: autograd-function). Graphs (torch.compile, fake tensors) get the
operators. Plain eager calls go to planner.product directly (ops.py).
"""
from typing import Optional, Sequence

import torch
import triton

from . import config_space, planner, rules, validation
from .kernels import version


def _register(name: str):
    """torch.library.triton_op on a GPU. In the CPU interpreter no tracer can see a kernel, so
    there the operator is an opaque custom_op (compiled graphs call it as it is), with the
    same function as its fake implementation (launch.launcher skips launches on fake tensors)."""
    def register(fn):
        if not validation.interpreting():
            return torch.library.triton_op(name, mutates_args=())(fn)
        op = torch.library.custom_op(name, mutates_args=())(fn)
        op.register_fake(fn)
        return op
    return register


def _pinned(config):
    return None if config is None else config_space.from_list(config)


# torch 2.11 cannot read which tensors a Triton >= 3.8 kernel writes (its generate_ttir: "Function argument index
# out of range"), so it takes every tensor a traced kernel gets as written; under dynamic shapes inductor's pattern
# matcher then fails. There every traced product goes into the graph opaque (design.md: traced-views).
TRACE_KERNELS = not (version(torch.__version__) < (2, 12) and version(triton.__version__) >= (3, 8))


def _planned(a, b, bias, activation: str, precision: str, config) -> torch.Tensor:
    """planner.product, or on fake tensors of a product that takes the TMA kernel, may split K or copy B
    (rules.runs_opaque), the opaque eager_product: the TMA kernel's host-side tensor descriptors do not
    trace through triton_op in torch 2.11-2.14, and a traced product keeps one launch, so the graph calls
    the planner itself when it runs (design.md: opaque-operator); every traced product where torch cannot
    analyse this Triton's kernels (TRACE_KERNELS)."""
    if validation.traced(a) and (not TRACE_KERNELS or rules.runs_opaque(a, b, precision)):
        return torch.ops.tritonmm.eager_product(a, b, bias, activation, precision, config)
    return planner.product(a, b, bias=bias, activation=activation, precision=precision, config=_pinned(config))


def _product(a: torch.Tensor, b: torch.Tensor, precision: str, config: Optional[Sequence[int]] = None) -> torch.Tensor:
    return _planned(a, b, None, "none", precision, config)


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor], activation: str, precision: str,
            config: Optional[Sequence[int]] = None) -> torch.Tensor:
    return _planned(x, weight.T, bias, activation, precision, config)


mm = _register("tritonmm::mm")(_product)
bmm = _register("tritonmm::bmm")(_product)
linear = _register("tritonmm::linear")(_linear)


# The opaque operators: defined on the dispatcher directly rather than by custom_op, whose Python
# wrappers around the function (autograd, the aliasing check, a dynamo-disabling context) cost more
# than the product's own launch; a compiled graph pays that on every call (64^3 bf16, H100 host: 66 us a
# call through custom_op against 31 for the planner alone; 43 against 33 so defined; design.md:
# opaque-operator). Neither records a gradient: they run inside the other operators' traced forward
# and backward graphs, and in the post-grad graphs the inductor pass rewrites.
_LIB = torch.library.Library("tritonmm", "FRAGMENT")


def _opaque(schema: str, fake):
    """Defines tritonmm::<schema> with the decorated function as its CUDA and CPU kernel, ``fake``
    as its fake implementation."""
    def define(fn):
        name = schema.split("(", 1)[0]
        _LIB.define(schema, tags=(torch.Tag.pt2_compliant_tag,))
        for key in ("CUDA", "CPU"):
            _LIB.impl(name, fn, key)
        torch.library.register_fake(f"tritonmm::{name}", fake, lib=_LIB)
        return getattr(torch.ops.tritonmm, name)
    return define


@_opaque("eager_product(Tensor a, Tensor b, Tensor? bias, str activation, str precision, int[]? config=None) -> Tensor",
         fake=lambda a, b, bias, activation, precision, config=None: a.new_empty((*a.shape[:-1], b.shape[-1])))
def eager_product(a, b, bias, activation, precision, config=None):
    """planner.product, run when a compiled graph runs rather than traced into it: the graph's
    path for products that take the TMA kernel or split K, and for every product where TRACE_KERNELS is false
    (_planned says why), and every product the inductor pass rewrites (2-D, or 3-D batched). Opaque to inductor, so it keeps tritonmm's own path
    choice, tuned configs and launch cache."""
    return planner.product(a, b, bias=bias, activation=activation, precision=precision, config=_pinned(config))


@_opaque("scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? bias, ScalarType out_dtype) -> Tensor",
         fake=lambda a, b, scale_a, scale_b, bias, out_dtype: a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype))
def scaled_mm(a, b, scale_a, scale_b, bias, out_dtype):
    """ops.scaled_mm inside a compiled graph: opaque, run by the planner when the graph runs (FP8
    products take the TMA kernel, which does not trace; _planned says why). No gradient:
    FP8 products are for inference, as torch._scaled_mm's."""
    return planner.product(a, b, precision="native", bias=bias, scales=(scale_a, scale_b), out_dtype=out_dtype)


def records_grad(*tensors) -> bool:
    """Whether autograd records a gradient for a call on these (None stands for an absent bias; a
    non-tensor records nothing, and the checks refuse it). A loop, not any(): every eager call
    asks, and a generator costs more than the test."""
    if torch.is_grad_enabled():
        for t in tensors:
            if getattr(t, "requires_grad", False):
                return True
    return False


def in_graph(t: torch.Tensor) -> bool:
    """Compiling or tracing (fake tensors): the operators, which graphs can record."""
    return torch.compiler.is_compiling() or validation.traced(t)


def _gradient_product(a, b, precision):
    """a @ b inside a gradient formula: the operator in a graph, the differentiable Function where
    this product records a gradient itself (create_graph), the planner directly otherwise."""
    if in_graph(a) or records_grad(a, b):
        return apply("mm" if a.dim() == 2 else "bmm", a, b, precision, None)
    return planner.product(a, b, precision=precision)


def _setup_product(ctx, inputs, output):
    a, b, precision, _ = inputs
    ctx.save_for_backward(a, b)
    ctx.precision = precision


def _mm_backward(ctx, grad):
    # dA = dC @ B.T and dB = A.T @ dC, through tritonmm on transposed views.
    a, b = ctx.saved_tensors
    da = _gradient_product(grad, b.mT, ctx.precision) if ctx.needs_input_grad[0] else None
    db = _gradient_product(a.mT, grad, ctx.precision) if ctx.needs_input_grad[1] else None
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
        z = apply("linear", x, weight, bias, "none", ctx.precision, None)
        grad = _ACTIVATION_BACKWARD[ctx.activation](grad, z)
    dx = _gradient_product(grad, weight, ctx.precision) if ctx.needs_input_grad[0] else None
    dw = _gradient_product(grad.T, x, ctx.precision) if ctx.needs_input_grad[1] else None
    db = grad.sum(0, dtype=torch.float32).to(bias.dtype) if bias is not None and ctx.needs_input_grad[2] else None
    return dx, dw, db, None, None, None


mm.register_autograd(_mm_backward, setup_context=_setup_product)
bmm.register_autograd(_mm_backward, setup_context=_setup_product)
linear.register_autograd(_linear_backward, setup_context=_setup_linear)


def _function(name, impl, setup_context, backward):
    """The operator's function and gradient formula as a torch.autograd.Function (eager calls). Its
    forward takes ctx and sets it up itself: with a separate setup_context, Function.apply binds
    default arguments through inspect.signature on every call (torch 2.11: a fifth of a 64^3
    forward + backward's host time under cProfile; design.md: autograd-function)."""
    def forward(ctx, *args):
        out = impl(*args)
        setup_context(ctx, args, out)
        return out
    return type(name, (torch.autograd.Function,), dict(forward=staticmethod(forward), backward=staticmethod(backward)))


_FUNCTIONS = {
    "mm": _function("MM", _product, _setup_product, _mm_backward),
    "bmm": _function("BMM", _product, _setup_product, _mm_backward),
    "linear": _function("Linear", _linear, _setup_linear, _linear_backward),
}


def apply(name: str, *args) -> torch.Tensor:
    """Operator ``name`` ("mm", "bmm" or "linear") on args, in its schema's order: the registered
    operator in a graph (compiling, fake tensors), its autograd.Function eagerly (module docstring)."""
    if in_graph(args[0]):
        return getattr(torch.ops.tritonmm, name)(*args)
    return _FUNCTIONS[name].apply(*args)
