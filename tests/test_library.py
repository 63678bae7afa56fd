"""The torch.library operators: registration (opcheck), autograd against torch, torch.compile."""
import pytest
import torch
import torch.nn.functional as F
from conftest import HAS_GPU, rel_err

import tritonmm
from tritonmm.tune import operands

# Gradient bounds per dtype: a gradient is a product of products, so a little looser than BOUND.
GRAD_BOUND = {torch.float32: 1e-5, torch.float16: 5e-3, torch.bfloat16: 3e-2}
DTYPES = [torch.float16, torch.bfloat16, torch.float32]
ACTS = [None, "relu", "gelu", "gelu_tanh", "silu"]
TORCH_ACT = {None: lambda z: z, "relu": F.relu, "gelu": F.gelu,
             "gelu_tanh": lambda z: F.gelu(z, approximate="tanh"), "silu": F.silu}


def frob(x, ref):
    return ((x.double() - ref.double()).norm() / ref.double().norm().clamp_min(1e-300)).item()


def leaves(*tensors):
    """Fresh leaf copies: one set for tritonmm, one in float64 for the reference."""
    ours = [t.detach().clone().requires_grad_() for t in tensors]
    ref = [t.detach().double().requires_grad_() for t in tensors]
    return ours, ref


@pytest.mark.parametrize("args", [
    lambda d: ("mm", (torch.randn(9, 13, device=d), torch.randn(13, 11, device=d), "ieee", None)),
    lambda d: ("mm", (torch.randn(13, 9, device=d).T, torch.randn(13, 11, device=d), "ieee", [16, 16, 16, 1, 4, 2])),
    lambda d: ("bmm", (torch.randn(3, 4, 5, device=d), torch.randn(1, 5, 6, device=d).expand(3, 5, 6), "ieee", None)),
    lambda d: ("linear", (torch.randn(7, 13, device=d), torch.randn(11, 13, device=d), torch.randn(11, device=d),
                          "silu", "ieee", None)),
    lambda d: ("linear", (torch.randn(7, 13, device=d), torch.randn(11, 13, device=d), None, "none", "ieee", None)),
    lambda d: ("eager_product", (torch.randn(7, 13, device=d), torch.randn(13, 11, device=d), torch.randn(11, device=d),
                                 "gelu", "ieee", None)),
], ids=["mm", "mm-transposed-pinned", "bmm-broadcast", "linear-bias-silu", "linear-plain", "eager-product"])
def test_opcheck(args, device):
    """Schema, fake implementation, autograd registration and AOT dispatch with dynamic shapes."""
    name, sample = args(device)
    if name != "eager_product":  # it runs inside the other operators' forward, under their autograd
        sample = tuple(t.requires_grad_() if isinstance(t, torch.Tensor) and t.is_leaf else t for t in sample)
    torch.library.opcheck(getattr(torch.ops.tritonmm, name).default, sample)


def test_eager_autograd_runs_the_formulas_as_functions(device):
    """Eager calls that record a gradient take the autograd Functions, not the operators' dispatch
    (the library docstring has the host times); gradients of gradients too."""
    a = torch.randn(7, 13, device=device, requires_grad=True)
    b = torch.randn(13, 5, device=device, requires_grad=True)
    w, bias = torch.randn(5, 13, device=device), torch.randn(5, device=device)
    c = tritonmm.mm(a, b, input_precision="ieee")
    assert type(c.grad_fn).__name__ == "MMBackward", c.grad_fn
    y = tritonmm.linear(a.view(1, 7, 13), w, bias, input_precision="ieee")
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "LinearBackward", y.grad_fn.next_functions
    (ga,) = torch.autograd.grad(c.sum(), a, create_graph=True)
    assert type(ga.grad_fn).__name__ == "MMBackward"  # dA = dC @ B.T, recorded by the Function: B requires grad
    assert frob(ga, torch.ones(7, 5, dtype=torch.float64, device=device) @ b.double().T) < 1e-5


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "TN", "NT"])
def test_mm_gradients(dtype, layout, device):
    a, b = operands(33, 17, 45, dtype, layout, device)
    (a1, b1), (a2, b2) = leaves(a, b)
    grad = torch.randn(33, 17, device=device).to(dtype)
    tritonmm.mm(a1, b1, input_precision="ieee" if dtype == torch.float32 else None).backward(grad)
    (a2 @ b2).backward(grad.double())
    assert frob(a1.grad, a2.grad) < GRAD_BOUND[dtype] and frob(b1.grad, b2.grad) < GRAD_BOUND[dtype]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("act", ACTS)
def test_linear_gradients(act, dtype, device):
    x = torch.randn(2, 9, 33, device=device).to(dtype)
    w = (torch.randn(17, 33, device=device) / 6).to(dtype)
    bias = torch.randn(17, device=device).to(dtype)
    (x1, w1, b1), (x2, w2, b2) = leaves(x, w, bias)
    y = tritonmm.linear(x1, w1, b1, act, input_precision="ieee" if dtype == torch.float32 else None)
    ref = TORCH_ACT[act](F.linear(x2, w2, b2))
    assert y.shape == ref.shape and frob(y, ref) < GRAD_BOUND[dtype]
    grad = torch.randn(ref.shape, device=device).to(dtype)
    y.backward(grad)
    ref.backward(grad.double())
    for ours, theirs in ((x1, x2), (w1, w2), (b1, b2)):
        assert frob(ours.grad, theirs.grad) < GRAD_BOUND[dtype]


@pytest.mark.parametrize("act", ACTS[1:])
def test_linear_operator_recomputes_the_pre_activation(act, device):
    """Called directly, tritonmm::linear with an activation has its own backward (recompute)."""
    x, w, bias = (torch.randn(*s, device=device, dtype=torch.float64).float() for s in ((7, 13), (11, 13), (11,)))
    (x1, w1, b1), (x2, w2, b2) = leaves(x, w, bias)
    torch.ops.tritonmm.linear(x1, w1, b1, act, "ieee").sum().backward()
    TORCH_ACT[act](F.linear(x2, w2, b2)).sum().backward()
    for ours, theirs in ((x1, x2), (w1, w2), (b1, b2)):
        assert frob(ours.grad, theirs.grad) < 1e-5


def test_batched_broadcast_gradients(device):
    a = torch.randn(3, 1, 5, 7, device=device)
    b = torch.randn(4, 7, 6, device=device)
    (a1, b1), (a2, b2) = leaves(a, b)
    out = tritonmm.matmul(a1, b1, input_precision="ieee")
    ref = a2 @ b2
    assert out.shape == ref.shape == (3, 4, 5, 6)
    grad = torch.randn(ref.shape, device=device)
    out.backward(grad)
    ref.backward(grad.double())
    assert frob(a1.grad, a2.grad) < 1e-5 and frob(b1.grad, b2.grad) < 1e-5


@pytest.mark.filterwarnings("ignore:Input #:UserWarning")  # float32 on purpose: the kernels take no float64
def test_gradcheck_ieee(device):
    """Finite differences in float32 are coarse: IEEE products and loose tolerances."""
    a = torch.randn(5, 7, device=device, requires_grad=True)
    b = torch.randn(7, 3, device=device, requires_grad=True)
    bias = torch.randn(3, device=device, requires_grad=True)
    fn = lambda a, b, bias: tritonmm.linear(a, b.T, bias, "silu", input_precision="ieee")  # noqa: E731
    assert torch.autograd.gradcheck(fn, (a, b, bias), eps=1e-2, atol=2e-2, rtol=2e-2)
    assert torch.autograd.gradcheck(lambda a, b: tritonmm.mm(a, b, input_precision="ieee"), (a, b),
                                    eps=1e-2, atol=2e-2, rtol=2e-2)


def test_double_backward(device):
    a = torch.randn(6, 5, device=device, dtype=torch.float64).float().requires_grad_()
    b = torch.randn(5, 4, device=device).requires_grad_()
    (ga,) = torch.autograd.grad(tritonmm.mm(a, b, input_precision="ieee").pow(2).sum(), a, create_graph=True)
    ga.sum().backward()
    a2, b2 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    (ga2,) = torch.autograd.grad((a2 @ b2).pow(2).sum(), a2, create_graph=True)
    ga2.sum().backward()
    assert frob(b.grad, b2.grad) < 1e-5


BACKEND = "inductor" if HAS_GPU else "aot_eager"  # the interpreter's kernels cannot be compiled


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph(dynamic, device):
    """No graph break around tritonmm, static and dynamic shapes, results as eager."""
    torch._dynamo.reset()
    fn = torch.compile(lambda x, y: torch.relu(tritonmm.matmul(x, y, input_precision="ieee")) * 2,
                       backend=BACKEND, fullgraph=True, dynamic=dynamic)
    for m in (33, 47):  # a second size: recompiles when static, reuses the graph when dynamic
        a, b = operands(m, 24, 40, torch.float32, "NN", device)
        out = fn(a, b)
        assert rel_err(out, a, b) > 0 and frob(out, torch.relu(a.double() @ b.double()) * 2) < 1e-5


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_tma_sized_products_run_the_planner(dynamic, device, monkeypatch):
    """A product that takes the TMA path eagerly reaches the compiled graph as the opaque
    tritonmm::eager_product operator, and the graph computes it right, gradients included."""
    from tritonmm import planner, thresholds, validation
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "few_tiles_per_sm", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_tma", True)  # its float32 is IEEE (design.md: ieee-pointer)
    ran = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: ran.append(validation.traced(a)) or real(a, b, **kw))
    torch._dynamo.reset()
    x, w, bias = torch.randn(2, 8, 32, device=device), torch.randn(24, 32, device=device), torch.randn(24, device=device)
    (x1, w1, b1), (x2, w2, b2) = leaves(x, w, bias)
    fn = torch.compile(lambda x, w, b: tritonmm.linear(x, w, b, input_precision="ieee").square().sum(),
                       backend=BACKEND, fullgraph=True, dynamic=dynamic)
    loss = fn(x1, w1, b1)
    loss.backward()
    ref = F.linear(x2, w2, b2).square().sum()
    ref.backward()
    assert frob(loss, ref) < 1e-5 and all(frob(p.grad, q.grad) < 1e-5 for p, q in ((x1, x2), (w1, w2), (b1, b2)))
    assert False in ran  # at least one product ran on real tensors, from inside the compiled graph


def test_compile_leaves_split_k_products_to_the_planner(device, monkeypatch):
    """A product of few tiles over a long K, which the planner may split over K (two launches), reaches
    the compiled graph as the opaque operator too; a small one is traced through to the kernel (in
    the interpreter every operator is opaque: there, only the rule and the results are checked)."""
    from tritonmm import library, planner, rules, validation
    facts = tritonmm.device.facts(torch.device(device))
    ran = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: ran.append(validation.traced(a)) or real(a, b, **kw))
    for M, K, opaque in ((16, 4096, True), (16, 40, False)):
        torch._dynamo.reset()
        ran.clear()
        x, w = torch.randn(M, K, device=device), torch.randn(24, K, device=device)
        assert rules.few_tiles(facts, M, 24) and rules.runs_opaque(x, w.T, "ieee") == opaque
        fn = torch.compile(lambda x, w: tritonmm.linear(x, w, input_precision="ieee"), backend=BACKEND, fullgraph=True)
        assert frob(fn(x, w), x.double() @ w.double().T) < 1e-5
        # opaque, in the interpreter, or where torch cannot read the kernels (library.TRACE_KERNELS): the planner runs
        assert False in ran if opaque or validation.interpreting() or not library.TRACE_KERNELS else False not in ran, \
            (M, K, ran)


def test_compile_leaves_ieee_products_whose_b_it_copies_to_the_planner(device, monkeypatch):
    """design.md: ieee-n-major, opaque-operator. A traced IEEE x @ W.T that the planner would read from an N-major copy
    of B reaches the compiled graph as the opaque operator, which makes the copy when the graph runs; with the bars out
    of reach it is traced through to the kernel (in the interpreter every operator is opaque: there, only the rule and
    the results are checked)."""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from tritonmm import library, planner, rules, thresholds, validation
    # The bars are fixed for a device, which inductor's caches key on; moved here, a graph an earlier test cached
    # would come back with the other route (on Triton 3.6 the traced kernel, and the planner never ran).
    monkeypatch.setattr(inductor_config, "fx_graph_cache", False)
    monkeypatch.setattr(functorch_config, "enable_autograd_cache", False)
    ran = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: ran.append(validation.traced(a)) or real(a, b, **kw))
    x, w = torch.randn(40, 40, device=device), torch.randn(24, 40, device=device)  # more rows than ieee-rows takes
    for bar, opaque in ((0, True), (float("inf"), False)):
        torch._dynamo.reset()
        ran.clear()
        with thresholds.override(ieee_n_major_min_macs=bar, ieee_n_major_eager_min_macs=bar):
            assert rules.runs_opaque(x, w.T, "ieee") == opaque
            fn = torch.compile(lambda x, w: tritonmm.linear(x, w, input_precision="ieee"), backend=BACKEND,
                               fullgraph=True)
            assert frob(fn(x, w), x.double() @ w.double().T) < 1e-5
        assert False in ran if opaque or validation.interpreting() or not library.TRACE_KERNELS else False not in ran, \
            (bar, ran)


def test_compile_leaves_every_product_to_the_planner_where_torch_cannot_read_the_kernels(device, monkeypatch):
    """Where torch cannot tell which tensors a Triton kernel writes (torch 2.11 beside Triton >= 3.8:
    library.TRACE_KERNELS false; design.md: traced-views), a small product that would be traced to its kernel
    reaches the graph as the opaque operator, which runs the planner on real tensors; static and dynamic shapes.
    (In the interpreter every operator is opaque already: there only the results are checked.)"""
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from tritonmm import library, planner, validation
    monkeypatch.setattr(library, "TRACE_KERNELS", False)
    # The flag is fixed for a process's torch and Triton, which inductor's caches key on; forced here, a graph
    # cached by an earlier test of the same function would come back with its traced kernel.
    monkeypatch.setattr(inductor_config, "fx_graph_cache", False)
    monkeypatch.setattr(functorch_config, "enable_autograd_cache", False)
    ran = []
    real = planner.product
    monkeypatch.setattr(planner, "product", lambda a, b, **kw: ran.append(validation.traced(a)) or real(a, b, **kw))
    for dynamic in (False, True):
        torch._dynamo.reset()
        ran.clear()
        fn = torch.compile(lambda x, y: torch.relu(tritonmm.matmul(x, y, input_precision="ieee")) * 2,
                           backend=BACKEND, fullgraph=True, dynamic=dynamic)
        for m in (33, 47):
            a, b = operands(m, 24, 40, torch.float32, "NN", device)
            assert frob(fn(a, b), torch.relu(a.double() @ b.double()) * 2) < 1e-5
        assert False in ran, (dynamic, ran)


def test_compile_linear_training_step(device):
    x = torch.randn(2, 5, 16, device=device)
    w = torch.randn(12, 16, device=device)
    bias = torch.randn(12, device=device)
    (x1, w1, b1), (x2, w2, b2) = leaves(x, w, bias)
    torch._dynamo.reset()
    step = torch.compile(lambda x, w, b: tritonmm.linear(x, w, b, "gelu_tanh", input_precision="ieee").square().mean(),
                         backend=BACKEND, fullgraph=True)
    step(x1, w1, b1).backward()
    F.gelu(F.linear(x2, w2, b2), approximate="tanh").square().mean().backward()
    for ours, theirs in ((x1, x2), (w1, w2), (b1, b2)):
        assert frob(ours.grad, theirs.grad) < 1e-5


def test_compile_bmm_and_linear_without_grad(device):
    torch._dynamo.reset()
    a = torch.randn(3, 9, 13, device=device)
    b = torch.randn(3, 13, 5, device=device)
    w, bias = torch.randn(7, 5, device=device), torch.randn(7, device=device)
    fn = torch.compile(lambda a, b: tritonmm.linear(tritonmm.matmul(a, b, input_precision="ieee"), w, bias, "relu",
                                                    input_precision="ieee"), backend=BACKEND, fullgraph=True)
    ref = F.relu(F.linear(a.double() @ b.double(), w.double(), bias.double()))
    assert frob(fn(a, b), ref) < 1e-5


@pytest.mark.gpu
def test_gpu_compile_reduce_overhead_cold_cache(tmp_path, monkeypatch):
    """CUDA graphs under torch.compile: with a cold tuning cache and tuning on, nothing may be
    benchmarked inside capture; the graph still computes the right product."""
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    tuning.forget()
    torch._dynamo.reset()
    fn = torch.compile(lambda x, y: tritonmm.matmul(x, y) + 1, mode="reduce-overhead", fullgraph=True)
    a, b = operands(96, 80, 112, torch.bfloat16, "NN", "cuda")
    for _ in range(3):  # warm-up, record, replay
        out = fn(a, b)
    torch.cuda.synchronize()
    assert frob(out, a.double() @ b.double() + 1) < 1e-2



def test_compile_with_out(device):
    """out= under torch.compile(fullgraph=True): the overlap check is skipped while Dynamo traces."""
    torch._dynamo.reset()
    fn = torch.compile(lambda a, b, out: tritonmm.mm(a, b, out=out, input_precision="ieee"), backend=BACKEND,
                       fullgraph=True)
    a, b = operands(20, 12, 16, torch.float32, "NN", device)
    out = torch.full((20, 12), float("nan"), device=device)
    fn(a, b, out)
    assert frob(out, a.double() @ b.double()) < 1e-5
