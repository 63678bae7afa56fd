"""The functional API: torch.mm, torch.matmul and F.linear semantics on tritonmm's kernels.

Each function checks its arguments, resolves the float32 precision as torch would, and then
either calls planner.product directly (plain eager calls: no dispatcher cost) or, when
torch.compile is tracing or autograd records a gradient, library.apply: the torch.library
operators, which carry the fake implementations and the gradient formulas, in graphs, and the
same formulas as autograd Functions eagerly. An eager call whose every checked fact (types,
shapes, strides, dtypes, devices, alignment, epilogue, precision) equals an earlier call's is
launched before the checks, from the launch cache (relaunch.py): the checks are a function of those facts,
and that earlier call passed them.
"""
import math

import torch
from torch.autograd.graph import increment_version

from . import config_space, library, native, planner, relaunch, validation
from .precision import resolve_precision, set_float32_default


def _needs_op(*tensors) -> bool:
    """Compiling or tracing (fake tensors), or a gradient to record: go through the registered operator."""
    return library.in_graph(tensors[0]) or library.records_grad(*tensors)


def _common(dtype, config, input_precision):
    precision = resolve_precision(dtype, validation.check_precision(input_precision))
    pinned = validation.check_config(config) if config is not None else None
    return precision, pinned


def _as_list(pinned):
    return None if pinned is None else config_space.as_list(pinned)


def _no_grad_out(out, *tensors):
    """torch's rule for out=: no argument, out included, may require a gradient while autograd records."""
    if out is not None and library.records_grad(out, *tensors):
        raise ValueError("out= does not record a gradient, and out or an input requires one; call without out=, "
                         "or under torch.no_grad()")


def _written(c, out):
    """c, after tritonmm's kernels wrote it into out (where given), eagerly: out's version bumped as torch's out=
    kernels bump it, so that a backward that saved out refuses to run on the new values (copy_ bumps its own, and
    native.cpp its own)."""
    if out is not None:
        increment_version(out)
    return c


def set_float32_precision(precision):
    """Sets the precision of float32 products that name none, process-wide, and returns the
    previous setting. None (the default) follows torch.mm's setting
    (torch.backends.cuda.matmul.fp32_precision, or the older allow_tf32 /
    set_float32_matmul_precision). "tf32x3" gives float32 accuracy on tensor cores: each
    operand is split into a TF32 high part and a TF32 remainder, and three tensor-core
    products are summed (README: where it is not IEEE). "ieee" and "tf32" as for torch."""
    return set_float32_default(validation.check_precision(precision))


def mm(a, b, *, out=None, config=None, input_precision=None):
    """C = a @ b for 2-D float16, bfloat16 or float32 tensors, exactly like torch.mm(a, b, out=out).

    Accumulates in fp32 and returns the inputs' dtype. float32 runs on TF32 tensor cores
    exactly when torch.mm would (torch.backends.cuda.matmul.fp32_precision, or the older
    allow_tf32 / set_float32_matmul_precision), unless set_float32_precision chose otherwise;
    ``input_precision="ieee"``, ``"tf32"`` or ``"tf32x3"`` (float32 accuracy from three TF32
    tensor-core products) overrides. ``config`` pins a tile config (a dict such as ``{"BLOCK_M": 128, "BLOCK_N":
    128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}`` or a triton.Config) and skips
    tuning; otherwise the config comes from the tuning cache, tuning, or a heuristic.
    """
    known = False  # native.repeat_mm's answer: None, a product C++ has not seen yet
    # A plain eager call of a product seen before: from the launch cache (an out that requires a gradient: the
    # full path, whose check refuses it as torch.mm does)
    if config is None and not _needs_op(a, b, out):
        c, known = _repeated(a, b, out, input_precision, matrices=True)
        if c is not None:
            return c
    validation.check_mm_args(a, b, out)
    precision, pinned = _common(a.dtype, config, input_precision)
    _no_grad_out(out, a, b)
    return _remembered(_mm(a, b, precision, pinned, out, _tells_native(known, out)), known, a, b, out)


def _repeated(a, b, out, input_precision, matrices=False):
    """mm's and matmul's repeat of a product seen before: (its result, or None to take the full path; native's
    answer, which _remembered takes). From C++ where it repeats a plain a @ b (no precision: C++ keys none; out=
    where C++ takes it, native.repeat_mm), else from the launch cache (relaunch.lookup)."""
    known = False  # mm and matmul come here only where _needs_op is false: no gradient to record
    # C++ repeats matrices, and for matmul a batch as bmm's (3-D operands of as many entries: native.cpp's cacheable;
    # a batch against a matrix, M folded, is not asked)
    if input_precision is None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and \
            (a.dim() == 2 or (a.dim() == 3 == b.dim() and not matrices)):
        known = native.repeat_mm(a, b, out)
        if isinstance(known, torch.Tensor):
            return known, known
    # served as the full path would plan it (_mm's ``served``): matrices told to C++, batches as bmm's (matmul)
    served = _tells_native(known, out) and (a.dim() == 2 or _bmm_as_given(a, a.reshape(a.shape), b, b.reshape(b.shape)))
    c = relaunch.lookup(a, b, out, None, "none", input_precision, matrices=matrices, served=served)
    return (None if c is None else _written(_remembered(c, known, a, b, out), out)), known


def _remembered(c, known, a, b, out=None):
    """c, the result of a @ b just run in Python (into out where given); where C++ did not know the product yet
    (known None), it is told how to repeat it. From an out= call only where out is laid out as a result is
    allocated, strides (N, 1) exactly ((M * N, N, 1) for a batch; is_contiguous() also passes (2N, 1) for one row)
    and 16-byte aligned: C++ allocates the calls without out= as the entry says, and the planner reads only the
    pointer's 16-byte alignment (layout.py), so the plan made for out holds for the allocator's blocks."""
    if _tells_native(known, out):
        _remember_native(a, b, None, out=out)
    return c


def _tells_native(known, out) -> bool:
    """Whether _remembered tells C++ how to repeat a call of mm or matmul (planner.product's ``served``)."""
    return known is None and (out is None or (out.stride() == _packed(out.shape) and out.data_ptr() % 16 == 0))


def _packed(shape) -> tuple:
    """The strides of a contiguous tensor of ``shape``, as torch.empty lays it out."""
    strides = [1]
    for size in reversed(shape[1:]):
        strides.append(strides[-1] * size)
    return tuple(reversed(strides))


def _mm(a, b, precision, pinned, out=None, served=False):
    """a @ b into out (allocated when None): 2-D operands, or 3-D ones as a batch (the bmm operator); ``served``:
    native.cpp will repeat it (planner.product)."""
    if _needs_op(a, b):
        c = library.apply("mm" if a.dim() == 2 else "bmm", a, b, precision, _as_list(pinned))
        return c if out is None else out.copy_(c)
    return _written(planner.product(a, b, precision=precision, out=out, config=pinned, served=served), out)


def _as_shape(out, shape):
    """out viewed as ``shape`` (the planner's result: M folded, a batch of one dimension), or None where its
    strides allow no such view (then the result is copied in)."""
    try:
        return out.view(shape)
    except RuntimeError:
        return None


def matmul(a, b, *, out=None, config=None, input_precision=None):
    """a @ b with torch.matmul's rules, for float16, bfloat16 and float32 tensors of any dims.

    2-D @ 2-D is mm. A 1-D operand is a row (left) or column (right) vector whose dimension
    is removed from the result. N-D @ 1-D or 2-D folds the leading dims into M (a view where
    the strides allow, else a copy, as torch.matmul does). Otherwise the batch dims broadcast
    and every product of the batch runs in one launch, a broadcast operand read through a
    batch stride of 0. ``out``, ``config`` and ``input_precision`` as for mm.
    """
    known = False
    if config is None and not _needs_op(a, b, out):  # as mm's
        c, known = _repeated(a, b, out, input_precision)
        if c is not None:
            return c
    validation.check_matmul_args(a, b)
    precision, pinned = _common(a.dtype, config, input_precision)
    _no_grad_out(out, a, b)
    if a.dim() == 2 and b.dim() == 2:
        if out is not None:
            validation.check_out(out, (a.shape[0], b.shape[1]), a, b)
        return _remembered(_mm(a, b, precision, pinned, out, _tells_native(known, out)), known, a, b, out)
    K = a.shape[-1]
    if b.dim() <= 2:  # fold a's leading dims into M
        a2, b2 = a.reshape(math.prod(a.shape[:-1]), K), (b if b.dim() == 2 else b.unsqueeze(1))
        shape = (*a.shape[:-1], *b.shape[1:])
    else:
        a_ = a.unsqueeze(0) if a.dim() == 1 else a
        M, N = a_.shape[-2], b.shape[-1]
        batch = torch.broadcast_shapes(a_.shape[:-2], b.shape[:-2])
        Z = math.prod(batch)
        a2, b2 = a_.expand(*batch, M, K).reshape(Z, M, K), b.expand(*batch, K, N).reshape(Z, K, N)
        shape = (*batch, *((M,) if a.dim() > 1 else ()), N)
    # A batch of 3-D operands of as many entries is bmm's, which C++ repeats once told (known None: it asked), keyed
    # as given: the planner's a2 and b2 must have their strides (a reshape rewrites a size-1 dimension's stride)
    bmm = known is None and _bmm_as_given(a, a2, b, b2)
    if out is None:
        c = _mm(a2, b2, precision, pinned, served=bmm)
        if bmm:
            _remember_native(a2, b2, None)
        return c.view(shape)
    validation.check_out(out, shape, a, b)
    # Written in place where out views as the planner's result: the launch cache then keys this call with its out,
    # and a repeat relaunches before any check (8x(128x3072x768) NT: 152 -> 14 us a call; design.md: relaunch-cache).
    into = _as_shape(out, (*a2.shape[:-1], b2.shape[-1]))
    told = bmm and into is not None and _tells_native(known, into)
    c = _mm(a2, b2, precision, pinned, into, served=told)
    if told:
        _remember_native(a2, b2, None, out=into)
    return out if into is not None else out.copy_(c.view(shape))


def linear(x, weight, bias=None, activation=None, *, config=None, input_precision=None):
    """activation(x @ weight.T + bias), like torch.nn.functional.linear followed by the activation,
    with the bias add and the activation fused into the kernel's epilogue (in fp32, before the
    one cast to x's dtype). weight is (out_features, in_features); x has any leading dims.
    activation: None, "relu", "gelu" (erf), "gelu_tanh" or "silu".

    Under autograd the product runs with its bias fused and the activation in torch, so
    the backward pass reuses the saved pre-activation instead of recomputing the product.
    """
    # The relaunch path for a (N,) bias only: the aten override caches addmm's products, whose
    # biases may be matrices or scalars, under keys a linear call could otherwise match.
    known = False  # native.repeat's answer: None, a product C++ has not seen yet
    if (config is None and isinstance(x, torch.Tensor) and isinstance(weight, torch.Tensor) and x.dim() >= 1
            and weight.dim() == 2 and (bias is None or getattr(bias, "ndim", 0) == 1) and not _needs_op(x, weight, bias)):
        if activation is None and input_precision is None:  # from C++ where it can, x as it is (native.py)
            known = native.repeat(x, weight, bias)
            if isinstance(known, torch.Tensor):
                return known
        # A plain 2-D x as it is: reshape and view cost 1-2 us a call on the host. (A Parameter's
        # reshape is a plain Tensor, the type the full path's key holds.)
        x2 = x if x.dim() == 2 and type(x) is torch.Tensor else x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
        y = relaunch.lookup(x2, weight, None, bias, "none" if activation is None else activation, input_precision,
                          True, b_transposed=True, served=known is None)
        if y is not None:
            if known is None:
                _remember_native(x2, weight, bias, b_transposed=True)
            return y if x2 is x else y.view((*x.shape[:-1], weight.shape[0]))
    activation = validation.check_linear_args(x, weight, bias, activation)
    precision, pinned = _common(x.dtype, config, input_precision)
    x2 = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    if _needs_op(x, weight, bias):
        fused = "none" if library.records_grad(x, weight, bias) else activation
        y = library.apply("linear", x2, weight, bias, fused, precision, _as_list(pinned))
        if fused != activation:
            y = planner.epilogue_reference(y, None, activation)
    else:
        y = planner.product(x2, weight.T, bias=bias, activation=activation, precision=precision, config=pinned,
                            served=known is None)
        if known is None:
            _remember_native(x2, weight, bias, b_transposed=True)
    return y.view((*x.shape[:-1], weight.shape[0]))


def _bmm_as_given(a, a2, b, b2) -> bool:
    """Whether matmul's batch (a2, b2: a and b as the planner takes them) is bmm's as given: 3-D operands of as many
    entries, the strides kept (a reshape rewrites a size-1 dimension's)."""
    return a.dim() == 3 == b.dim() and a.shape[0] == b.shape[0] and a2.stride() == a.stride() and \
        b2.stride() == b.stride()


def _remember_native(a, b, bias, b_transposed=False, out=None) -> None:
    """The product a @ b + bias (a @ b.T + bias where b_transposed: linear's weight), just run (into out where
    given), given to native.cpp to repeat (or to leave to Python)."""
    key = relaunch.key(a, b, out, bias, "none", resolve_precision(a.dtype, None), b_transposed=b_transposed,
                       served=True)  # the call was planned as one native.cpp repeats
    native.remember(a, b.T if b_transposed else b, bias, relaunch.cached(key))


def scaled_mm(a, b, scale_a, scale_b, *, bias=None, out_dtype=torch.bfloat16):
    """C = (a * scale_a) @ (b * scale_b) + bias for FP8 matrices, in out_dtype: the product of
    ``torch._scaled_mm``, for any layout of a and b (row- or column-major, transposed views).

    a (M, K) and b (K, N) are torch.float8_e4m3fn or torch.float8_e5m2. Scales are float32:
    one value for the operand (shape () or (1,)), or one per row of a, (M, 1), and one per
    column of b, (1, N); a and b choose independently. They multiply the fp32 accumulator, and
    the bias ((N,), any float dtype) is added after them, before the one cast to out_dtype
    (torch.bfloat16, torch.float16 or torch.float32). Needs FP8 tensor cores (compute
    capability 8.9+). quantize_fp8 makes a, b and their scales from float tensors.
    """
    scales = (scale_a, scale_b)
    if not torch.compiler.is_compiling():
        c = relaunch.lookup(a, b, None, bias, "none", None, True, scales, out_dtype)
        if c is not None:
            return c
    validation.check_scaled_mm_args(a, b, scale_a, scale_b, bias, out_dtype)
    # The kernels read a vector scale with unit stride.
    scale_a, scale_b = scale_a.contiguous(), scale_b.contiguous()
    if torch.compiler.is_compiling() or validation.traced(a):  # compile, export, make_fx: the operator
        return torch.ops.tritonmm.scaled_mm(a, b, scale_a, scale_b, bias, out_dtype)
    return planner.product(a, b, precision="native", bias=bias, scales=(scale_a, scale_b), out_dtype=out_dtype)


def quantize_fp8(x, dtype=torch.float8_e4m3fn, *, dim=None):
    """(q, scale) with x ~ q * scale: x quantized to FP8 with an amax-based scale, saturating.

    ``dim=None``: one scale for the tensor (shape ()); otherwise one per slice along ``dim``,
    kept as a size-1 dimension: dim=1 gives a (M, K) activation a scale per row, (M, 1), and
    dim=0 gives a (K, N) weight a scale per column, (1, N), the shapes scaled_mm takes. The
    scale maps each slice's largest magnitude to the FP8 type's largest finite value; values
    are divided by it, clamped to that range and rounded to nearest. x must be finite. Two
    lines from float tensors to the FP8 product::

        (qa, sa), (qb, sb) = tritonmm.quantize_fp8(x, dim=1), tritonmm.quantize_fp8(w.T, dim=0)
        y = tritonmm.scaled_mm(qa, qb, sa, sb, out_dtype=x.dtype)
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in validation.SUPPORTED_DTYPES:
        raise TypeError(f"x has dtype {x.dtype}; quantize_fp8 takes torch.float16, torch.bfloat16 or torch.float32")
    if dtype not in validation.FP8_DTYPES:
        raise TypeError(f"dtype must be torch.float8_e4m3fn or torch.float8_e5m2, got {dtype}")
    if dim is not None and not -x.dim() <= dim < x.dim():
        raise ValueError(f"dim={dim} is out of range for a {x.dim()}-D tensor; pass None for one scale")
    largest = torch.finfo(dtype).max
    magnitude = x.abs().amax() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    # An all-zero slice gets the smallest normal scale: any positive scale quantizes it exactly.
    scale = (magnitude.float() / largest).clamp(min=torch.finfo(torch.float32).tiny)
    return (x.float() / scale).clamp(-largest, largest).to(dtype), scale
