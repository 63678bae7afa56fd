"""torch.compile under use_tritonmm(): the inductor graph pass (tritonmm/inductor_pass.py), its place in
inductor's config and caches, and the override's out= overloads that compiled code calls.

On the CPU, Triton's interpreter runs tritonmm's kernels and inductor compiles CPU graphs, so the
rewritten graphs, the products they run and their results are all checked here; the GPU tests profile
compiled models for tritonmm's kernels and against cuBLAS's. Where transformers is installed (the dev extra), a
LlamaForCausalLM built from a config with random weights is compiled and checked the same ways.
"""
import contextlib
import copy
import tempfile
from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import tritonmm
from tritonmm import inductor_pass, override, planner, validation
from torch._inductor import config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass

from conftest import DEVICE

aten = torch.ops.aten
PRODUCTS = {aten.mm.default, aten.addmm.default, aten.bmm.default}
# The pass puts every product it takes into the graph as the opaque operator.
PRODUCT = torch.ops.tritonmm.eager_product.default
TRITONMM_OPS = {torch.ops.tritonmm.mm.default, torch.ops.tritonmm.bmm.default, torch.ops.tritonmm.linear.default,
                PRODUCT}
# Relative Frobenius bounds against float64 for a small model's output and gradients; float32's allows
# for TF32, which torch may have on.
BOUND = {torch.float32: 2e-3, torch.bfloat16: 3e-2}
MODES = ["default", "reduce-overhead", "max-autotune"]


@pytest.fixture(scope="module", autouse=True)
def own_inductor_cache():
    """Compiled graphs go to a cache of this module's own: neither reused from other runs nor left behind."""
    with tempfile.TemporaryDirectory(prefix="tritonmm-inductor-") as cache, pytest.MonkeyPatch.context() as patch:
        patch.setenv("TORCHINDUCTOR_CACHE_DIR", cache)
        yield


@pytest.fixture(autouse=True)
def fresh_state():
    """Every test starts and ends disabled, with no compiled frames and the user's pass setting as it was."""
    setting = inductor_config.post_grad_custom_post_pass
    tritonmm.disable()
    torch._dynamo.reset()
    yield
    tritonmm.disable()
    torch._dynamo.reset()
    inductor_config.post_grad_custom_post_pass = setting


@pytest.fixture
def launches():
    """The products planner.product runs on real tensors (compiling also runs it on fake ones, the
    operators' fake implementations), by device; the override and the operators call it through
    the module attribute."""
    calls = []
    real = planner.product

    def counted(a, b, **kwargs):
        if not validation.traced(a):
            calls.append(a.device.type)
        return real(a, b, **kwargs)

    with mock.patch.object(planner, "product", counted):
        yield calls


@pytest.fixture
def rewritten():
    """The graphs the pass rewrites, as their call_function nodes (target, args) after it."""
    graphs = []
    real = inductor_pass.rewrite

    def spy(graph):
        count = real(graph)
        graphs.append([(n.target, n.args) for n in graph.nodes if n.op == "call_function"])
        return count

    with mock.patch.object(inductor_pass, "rewrite", spy):
        yield graphs


def rel(out: torch.Tensor, ref: torch.Tensor) -> float:
    if torch.isnan(out).any():
        return float("inf")
    return ((out.double() - ref.double()).norm() / ref.double().norm()).item()


class Block(torch.nn.Module):
    """A Linear on a 3-D input with relu, attention-like batched products, a Linear with gelu, one
    without a bias: addmm (behind a view), bmm, addmm and mm in the graph; odd sizes, none square."""

    def __init__(self, dim=19, hidden=37, out=11, head=7):
        super().__init__()
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, out)
        self.head = torch.nn.Linear(out, head, bias=False)

    def forward(self, x):
        h = F.relu(self.up(x))
        scores = torch.bmm(h, h.transpose(1, 2)) / 8
        return self.head(F.gelu(self.down(torch.bmm(scores, h))))


def make_block(dtype, device, dim=19):
    torch.manual_seed(0)
    model = Block(dim).to(device=device, dtype=dtype)
    x = torch.randn(3, 5, dim, device=device, dtype=dtype, requires_grad=True)
    return model, x


def step(fn, model, x):
    """Output and gradients (input's, then parameters') of one forward and backward pass."""
    model.zero_grad(set_to_none=True)
    x.grad = None
    y = fn(x)
    y.backward(torch.ones_like(y))
    return [y.detach().clone(), x.grad.clone(), *(p.grad.clone() for p in model.parameters())]


def float64_copy(model):
    return copy.deepcopy(model).double()


def float64_step(model, x):
    model64 = float64_copy(model)
    return step(model64, model64, x.detach().double().requires_grad_(True))


def targets(graph):
    return [target for target, _ in graph]


def fused(graph):
    """The epilogues (activation names) of the rewritten products that have a bias or an activation."""
    return sorted(args[3] for target, args in graph if target is PRODUCT and (args[2] is not None or args[3] != "none"))


def batched(graph, dims: int) -> int:
    """How many rewritten products of the graph take ``dims``-D operands (3: bmm, 2: mm and linear)."""
    return sum(target is PRODUCT and args[0].meta["val"].dim() == dims for target, args in graph)


# The pass's place in inductor's config.

class UserPass(CustomGraphPass):
    """A post-grad pass of the user's: counts its calls."""

    def __init__(self, uuid="users-pass"):
        self.calls, self._uuid = 0, uuid

    def __call__(self, graph):
        self.calls += 1

    def uuid(self):
        return self._uuid


def test_enable_installs_the_pass_chained_to_the_users_and_disable_restores_it():
    theirs = UserPass()
    inductor_config.post_grad_custom_post_pass = theirs
    padding = inductor_config.shape_padding
    with tritonmm.use_tritonmm():
        installed = inductor_config.post_grad_custom_post_pass
        assert isinstance(installed, inductor_pass.TritonmmPass) and installed.chained is theirs
        assert inductor_config.shape_padding is False  # tritonmm reads unaligned operands as they are
        on = installed.uuid()
        assert on is not None and "users-pass" in on[1]
        installed(torch.fx.Graph())
        assert theirs.calls == 1  # theirs runs, then tritonmm's
    assert inductor_config.post_grad_custom_post_pass is theirs
    assert inductor_config.shape_padding == padding
    assert installed.uuid() != on  # a copy left behind keys graphs as compiled without tritonmm


def test_disable_leaves_a_pass_set_while_enabled():
    tritonmm.enable()
    theirs = UserPass()
    inductor_config.post_grad_custom_post_pass = theirs
    inductor_config.shape_padding = True
    tritonmm.disable()
    assert inductor_config.post_grad_custom_post_pass is theirs
    assert inductor_config.shape_padding is True


def test_uuid_follows_the_chained_passes_and_the_float32_precision():
    plain = lambda graph: None  # noqa: E731 (a pass without a uuid: inductor does not cache with it)
    with tritonmm.use_tritonmm():
        ours = inductor_config.post_grad_custom_post_pass
        assert ours.uuid() == inductor_pass.TritonmmPass(None).uuid()  # stable: cached graphs are found again
        assert inductor_pass.TritonmmPass([UserPass("a"), UserPass("b")]).uuid() != ours.uuid()
        assert inductor_pass.TritonmmPass(plain).uuid() is None
        # float32 graphs call the operators with the precision resolved when they compile
        previous = tritonmm.set_float32_precision("ieee")
        try:
            ieee = ours.uuid()
            tritonmm.set_float32_precision("tf32x3")
            assert ours.uuid() != ieee
        finally:
            tritonmm.set_float32_precision(previous)


def test_bad_input_is_refused_and_changes_nothing():
    inductor_config.post_grad_custom_post_pass = "not a pass"
    with pytest.raises(TypeError, match="post_grad_custom_post_pass holds 'not a pass'"):
        tritonmm.enable()
    assert not override.enabled() and inductor_config.post_grad_custom_post_pass == "not a pass"
    with pytest.raises(TypeError, match="torch.fx.Graph"):
        inductor_pass.rewrite(torch.nn.Linear(2, 2))


# The rewrite, on FX graphs traced with fake tensors (no inductor).

def _silu_by_hand(z):
    return z * torch.sigmoid(z)


def _with_pre_activation(x, w, bias):
    z = aten.addmm(bias, x, w.t())
    return z, aten.relu(z)


# name: (function, its inputs' shapes, float64 reference, operators the rewrite leaves, activations fused)
def _graph_cases():
    lin = lambda x, w, bias: aten.addmm(bias, x, w.t())  # noqa: E731 (aten's F.linear on 2-D x)
    return {
        "mm": (lambda a, b: aten.mm(a, b), [(13, 21), (21, 9)], lambda a, b: a @ b,
               [PRODUCT], []),
        "bmm": (lambda a, b: aten.bmm(a, b), [(3, 7, 11), (3, 11, 5)], lambda a, b: a @ b,
                [PRODUCT], []),
        "addmm": (lin, [(13, 21), (9, 21), (9,)], lambda x, w, bias: x @ w.T + bias,
                  [PRODUCT], ["none"]),
        "addmm relu": (lambda x, w, bias: aten.relu(lin(x, w, bias)), [(13, 21), (9, 21), (9,)],
                       lambda x, w, bias: torch.relu(x @ w.T + bias), [PRODUCT], ["relu"]),
        "mm + bias, gelu tanh": (lambda x, w, bias: aten.gelu(aten.add(aten.mm(x, w.t()), bias), approximate="tanh"),
                                 [(13, 21), (9, 21), (9,)],
                                 lambda x, w, bias: F.gelu(x @ w.T + bias, approximate="tanh"),
                                 [PRODUCT], ["gelu_tanh"]),
        "mm, silu by hand, through a view": (
            lambda x, w: _silu_by_hand(aten.view(aten.mm(aten.view(x, [15, 21]), w.t()), [3, 5, 9])),
            [(3, 5, 21), (9, 21)], lambda x, w: F.silu(x @ w.T), [PRODUCT], ["silu"]),
        "mm, a no-op add, gelu": (lambda a, b: aten.gelu(aten.mm(a, b) + 0), [(13, 21), (21, 9)],
                               lambda a, b: F.gelu(a @ b), [PRODUCT], ["gelu"]),
        # Left alone: what tritonmm does not take, and activations it does not fuse.
        "float64": (lambda a, b: aten.mm(a.double(), b.double()), [(13, 21), (21, 9)], lambda a, b: a @ b,
                    [aten.mm.default], []),
        "addmm with beta": (lambda x, w, bias: aten.addmm(bias, x, w.t(), beta=0.5), [(13, 21), (9, 21), (9,)],
                            lambda x, w, bias: x @ w.T + 0.5 * bias, [aten.addmm.default], []),
        "addmm with a matrix bias": (lambda x, w, bias: aten.addmm(bias, x, w.t()), [(13, 21), (9, 21), (13, 9)],
                                     lambda x, w, bias: x @ w.T + bias, [aten.addmm.default], []),
        "pre-activation also returned": (_with_pre_activation, [(13, 21), (9, 21), (9,)],
                                         lambda x, w, bias: (x @ w.T + bias, torch.relu(x @ w.T + bias)),
                                         [PRODUCT], ["none"]),
        "tanh": (lambda a, b: aten.tanh(aten.mm(a, b)), [(13, 21), (21, 9)], lambda a, b: torch.tanh(a @ b),
                 [PRODUCT], []),
        "relu, then scaled": (lambda a, b: aten.relu(aten.mm(a, b)) * 2, [(13, 21), (21, 9)],
                              lambda a, b: torch.relu(a @ b) * 2, [PRODUCT], ["relu"]),
        # A transcendental activation read only by pointwise ops stays inductor's, computed in their kernel
        # (a SwiGLU); relu, free in the epilogue, fuses whatever reads it.
        "swiglu": (lambda x, w1, w2: _silu_by_hand(aten.mm(x, w1.t())) * aten.mm(x, w2.t()),
                   [(13, 21), (9, 21), (9, 21)], lambda x, w1, w2: F.silu(x @ w1.T) * (x @ w2.T),
                   [PRODUCT, PRODUCT], []),
        "gelu through a view, then added": (
            lambda x, w, c: aten.add(aten.gelu(aten.view(aten.mm(x, w.t()), [3, 3, 13])), c),
            [(9, 21), (13, 21), (3, 3, 13)], lambda x, w, c: F.gelu((x @ w.T).view(3, 3, 13)) + c,
            [PRODUCT], []),
        "relu into a multiply": (lambda x, w1, w2: aten.relu(aten.mm(x, w1.t())) * aten.mm(x, w2.t()),
                                 [(13, 21), (9, 21), (9, 21)], lambda x, w1, w2: torch.relu(x @ w1.T) * (x @ w2.T),
                                 [PRODUCT, PRODUCT], ["relu"]),
        "two activations of one product": (lambda a, b: (lambda z: aten.relu(z) + torch.sigmoid(z))(aten.mm(a, b)),
                                   [(13, 21), (21, 9)], lambda a, b: torch.relu(a @ b) + torch.sigmoid(a @ b),
                                   [PRODUCT], []),
    }


@pytest.mark.parametrize("case", list(_graph_cases()))
def test_rewrite_replaces_the_products_tritonmm_takes(case):
    from torch.fx.experimental.proxy_tensor import make_fx
    fn, shapes, reference, expect_ops, expect_fused = _graph_cases()[case]
    graph_module = make_fx(fn, tracing_mode="fake")(*(torch.empty(s, device=DEVICE) for s in shapes))
    with tritonmm.use_tritonmm():
        count = inductor_pass.rewrite(graph_module.graph)
    graph_module.graph.lint()
    graph_module.recompile()
    nodes = [(n.target, n.args) for n in graph_module.graph.nodes if n.op == "call_function"]
    products = [t for t in targets(nodes) if t in PRODUCTS | TRITONMM_OPS]
    assert products == expect_ops and count == sum(t in TRITONMM_OPS for t in expect_ops)
    assert fused(nodes) == sorted(expect_fused)
    inputs = [torch.randn(s, device=DEVICE) for s in shapes]  # fresh values, after the tracing
    got = graph_module(*inputs)
    want = reference(*(t.double() for t in inputs))
    for g, w in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
        assert rel(g, w) < BOUND[torch.float32], case


# The activation recogniser, on products followed by decompositions as inductor writes them: a 16-bit
# product upcast to float32, the activation's pointwise ops, and the cast back.

def _decomposed(activation, rounding=None):
    """fn(z): ``activation`` of z, computed in float32 (cast to the ``rounding`` dtype and back first,
    where given), cast back to z's dtype."""
    def fn(z):
        x = torch.ops.prims.convert_element_type(z, torch.float32)
        if rounding is not None:
            x = torch.ops.prims.convert_element_type(torch.ops.prims.convert_element_type(x, rounding), torch.float32)
        return torch.ops.prims.convert_element_type(activation(x), z.dtype)
    return fn


_ACTIVATION_CASES = {  # name: (activation of a float32 tensor, what the pass fuses, or None)
    "gelu (erf)": (lambda x: (x * 0.5) * (aten.erf(x * 0.7071067811865476) + 1), "gelu"),
    "gelu (erfc)": (lambda x: x * 0.5 * aten.erfc(x * -0.7071067811865476), "gelu"),
    "gelu (tanh)": (lambda x: (x * 0.5) * (aten.tanh((x + x * x * x * 0.044715) * 0.7978845608028654) + 1),
                    "gelu_tanh"),
    "silu": (lambda x: x / (aten.exp(-x) + 1), "silu"),
    "relu": (lambda x: aten.relu(x), "relu"),
    # near misses: within a 16-bit rounding of an activation, but another function
    "gelu with sqrt(1/2) to 4 digits": (lambda x: (x * 0.5) * (aten.erf(x * 0.7071) + 1), None),
    "gelu (tanh) with kappa to 3 digits": (
        lambda x: (x * 0.5) * (aten.tanh((x + x * x * x * 0.0447) * 0.7978845608028654) + 1), None),
    "sigmoid": (lambda x: aten.sigmoid(x), None),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("case", list(_ACTIVATION_CASES))
def test_rewrite_recognises_activations_whatever_the_dtype(case, dtype):
    """Judged in float64 on the CPU, whatever the graph's dtype and device: gelu and gelu_tanh (at most
    4.7e-4 apart, under a bfloat16 rounding) are told apart in every dtype, however the device's erf
    and tanh kernels round in float32 (a float32 evaluation of gelu is 4e-7 from the exact one on some
    CPUs, near the 4.8e-7 the pass once allowed); a function merely close to an activation is not
    taken for it."""
    from torch.fx.experimental.proxy_tensor import make_fx
    activation, expect = _ACTIVATION_CASES[case]
    fn = lambda a, b: _decomposed(activation)(aten.mm(a, b))  # noqa: E731
    graph_module = make_fx(fn, tracing_mode="fake")(torch.empty(13, 21, device=DEVICE, dtype=dtype),
                                                    torch.empty(21, 9, device=DEVICE, dtype=dtype))
    with tritonmm.use_tritonmm():
        assert inductor_pass.rewrite(graph_module.graph) == 1
    graph_module.graph.lint()
    nodes = [(n.target, n.args) for n in graph_module.graph.nodes if n.op == "call_function"]
    if expect is None:
        assert PRODUCT in targets(nodes) and not fused(nodes)
    else:
        assert fused(nodes) == [expect]  # and nothing else: the casts went too
        assert set(targets(nodes)) == {PRODUCT}


@pytest.mark.parametrize("rounding, dtype", [(torch.bfloat16, torch.float32), (torch.float16, torch.float32),
                                             (torch.float16, torch.bfloat16), (torch.bfloat16, torch.float16)],
                         ids=str)
def test_rewrite_leaves_an_activation_after_a_rounding_the_product_does_not_have(rounding, dtype):
    """A cast in the chain to a dtype that does not hold every value of the product's rounds, which
    linear's epilogue would not do: the activation stays inductor's."""
    from torch.fx.experimental.proxy_tensor import make_fx
    fn = lambda a, b: _decomposed(_ACTIVATION_CASES["relu"][0], rounding)(aten.mm(a, b))  # noqa: E731
    graph_module = make_fx(fn, tracing_mode="fake")(torch.empty(13, 21, device=DEVICE, dtype=dtype),
                                                    torch.empty(21, 9, device=DEVICE, dtype=dtype))
    with tritonmm.use_tritonmm():
        inductor_pass.rewrite(graph_module.graph)
    nodes = [(n.target, n.args) for n in graph_module.graph.nodes if n.op == "call_function"]
    assert PRODUCT in targets(nodes) and not fused(nodes)


# Compiled models on the CPU (inductor's C++ backend; tritonmm's kernels in the interpreter).

@pytest.mark.parametrize("mode", MODES)
def test_compiled_model_runs_tritonmm_forward_and_backward(mode, launches, rewritten):
    theirs = UserPass()
    inductor_config.post_grad_custom_post_pass = theirs
    model, x = make_block(torch.float32, DEVICE)
    want = float64_step(model, x)
    with tritonmm.use_tritonmm():
        got = step(torch.compile(model, mode=mode), model, x)
    assert theirs.calls == 2  # the user's pass still runs, on the forward and the backward graph
    assert len(rewritten) == 2
    forward, backward = rewritten
    for graph in rewritten:
        assert not PRODUCTS & set(targets(graph)), "an aten product is left for inductor"
    assert fused(forward) == ["none", "relu"]  # gelu's input is saved for the backward pass, so not fused
    assert batched(forward, 3) == 2 and batched(forward, 2) == 3
    assert batched(backward, 2) == 6 and batched(backward, 3) == 4  # dx and dW of three Linears; two bmm's
    assert launches.count(DEVICE) == 5 + 6 + 4  # forward 5; backward 6 mm and 4 bmm
    for name, g, w in zip(["output", "x.grad", *(n for n, _ in model.named_parameters())], got, want):
        assert rel(g, w) < BOUND[torch.float32], name


def make_mlp(dtype):
    """Linears followed by each activation tritonmm fuses, as inductor decomposes them."""
    torch.manual_seed(0)
    sizes = [19, 37, 23, 13, 7]
    activations = [torch.nn.ReLU(), torch.nn.GELU(), torch.nn.GELU(approximate="tanh"), torch.nn.SiLU()]
    layers = [m for i, act in enumerate(activations) for m in (torch.nn.Linear(sizes[i], sizes[i + 1]), act)]
    return torch.nn.Sequential(*layers).to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_inference_fuses_each_activation(dtype, launches, rewritten):
    """Without a backward pass nothing else reads the products: every activation goes into linear's
    epilogue (in bfloat16 too, where gelu and gelu_tanh differ by less than a rounding at some points)."""
    model = make_mlp(dtype).to(DEVICE)
    x = torch.randn(6, 19, device=DEVICE).to(dtype)
    with torch.no_grad():
        want = float64_copy(model)(x.double())
        aten = model(x)
        with tritonmm.use_tritonmm():
            got = torch.compile(model)(x)
    (graph,) = rewritten
    assert fused(graph) == ["gelu", "gelu_tanh", "relu", "silu"]
    assert launches.count(DEVICE) == 4
    assert rel(got, want) < max(BOUND[dtype], 2 * rel(aten, want))


def test_compiled_products_tritonmm_does_not_take_stay_with_aten(launches, rewritten):
    """float64 Linears: each one's product stays aten's, as whichever overload inductor made of it (addmm,
    or mm then the bias add where pointwise ops follow, as on GPUs and in some torch versions)."""
    model = make_mlp(torch.float64).to(DEVICE)
    x = torch.randn(6, 19, device=DEVICE, dtype=torch.float64)
    with torch.no_grad():
        want = model(x)
        with tritonmm.use_tritonmm():
            got = torch.compile(model)(x)
    (graph,) = rewritten
    assert len([t for t in targets(graph) if t in PRODUCTS]) == 4, targets(graph)  # one per Linear
    assert not TRITONMM_OPS & set(targets(graph))
    assert not launches
    torch.testing.assert_close(got, want)


def test_the_switch_keys_inductors_cache(launches, rewritten):
    """Fresh compiles off, on, then off again: each runs its own setting though the graph compiled for
    the other is in inductor's cache, and the third finds the first's there (the pass's uuid keys the
    cache, and nothing else of tritonmm's is left in the key once disabled)."""
    from torch._dynamo.utils import counters

    def cache_hits():
        return counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]

    model, x = make_block(torch.float32, DEVICE, dim=23)  # graphs no other test of this module compiles
    with torch.no_grad():
        want = float64_copy(model)(x.double())
        for on in (False, True, False):
            torch._dynamo.reset()
            hits, before = cache_hits(), len(launches)
            with tritonmm.use_tritonmm() if on else contextlib.nullcontext():
                got = torch.compile(model)(x)
            assert (len(launches) > before) is on
            assert rel(got, want) < BOUND[torch.float32]
        assert cache_hits() > hits
    assert len(rewritten) == 1  # compiled while on, not the first graph found in the cache


def test_function_compiled_before_enabling_runs_tritonmm_through_out_overloads(launches, rewritten):
    """A graph compiled while disabled calls aten's out= kernels (extern_kernels.mm(a, b, out=buf)):
    enabled, the override takes them, and the compiled function runs tritonmm with no recompile."""
    model, x = make_block(torch.float32, DEVICE)
    compiled = torch.compile(model)
    with torch.no_grad():
        want = compiled(x)
        assert not launches
        with tritonmm.use_tritonmm():
            got = compiled(x)
    assert not rewritten  # no recompile: the same graph
    assert launches.count(DEVICE) == 5
    assert rel(got, want.double()) < BOUND[torch.float32]


# GPU: profiles of compiled models.

TRITONMM_KERNELS = ("gemm_kernel", "gemm_tma_kernel", "gemv_kernel", "split_k_reduce_kernel", "copy_kernel",
                    "gluon_gemm_kernel")
# Products of anyone else: cuBLAS (nvjet, sm90_xmma, ampere_*gemm*, gemv2T...), CUTLASS, inductor's templates.
OTHER_PRODUCT_MARKS = ("gemm", "gemv", "nvjet", "xmma", "cutlass", "splitkreduce", "triton_tem")


def kernels(fn):
    """The names of the CUDA kernels that run in fn()."""
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as profile:
        fn()
        torch.cuda.synchronize()
    return {e.name for e in profile.events() if e.device_type == torch.autograd.DeviceType.CUDA}


def split_kernels(names):
    """(tritonmm's kernels, other products' kernels) among names."""
    ours = {n for n in names if n.startswith(TRITONMM_KERNELS)}
    others = {n for n in names - ours if any(mark in n.lower() for mark in OTHER_PRODUCT_MARKS)}
    return ours, others


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("mode", MODES)
def test_gpu_compiled_model_runs_only_tritonmm_products(mode, dtype):
    """Forward and backward, from the compile (whose first run executes each graph as it is, before
    reduce-overhead captures it) through two more steps; results as close to float64 as aten's."""
    model, x = make_block(dtype, "cuda")
    want = float64_step(model, x)
    aten = step(model, model, x)
    results = []
    with tritonmm.use_tritonmm():
        compiled = torch.compile(model, mode=mode)

        def steps():
            for _ in range(3):
                torch.compiler.cudagraph_mark_step_begin()
                results.append(step(compiled, model, x))

        names = kernels(steps)
    ours, others = split_kernels(names)
    assert ours, f"no tritonmm kernel ran: {sorted(names)}"
    assert not others, f"other products ran: {sorted(others)}"
    for got in results:
        for i, (g, w, a) in enumerate(zip(got, want, aten)):
            assert rel(g, w) < max(BOUND[dtype], 2 * rel(a, w)), i


@pytest.mark.gpu
def test_gpu_disabling_gives_cublas_back_to_a_fresh_compile():
    model, x = make_block(torch.float32, "cuda")
    with tritonmm.use_tritonmm():
        on = step(torch.compile(model), model, x)
    torch._dynamo.reset()
    off = []
    names = kernels(lambda: off.append(step(torch.compile(model), model, x)))
    ours, others = split_kernels(names)
    assert not ours, f"tritonmm ran while disabled: {sorted(ours)}"
    assert others, f"no cuBLAS product ran: {sorted(names)}"
    for a, b in zip(on, off[0]):
        assert rel(a, b) < BOUND[torch.float32]


@pytest.mark.gpu
def test_gpu_function_compiled_before_enabling_runs_tritonmm():
    model, x = make_block(torch.float32, "cuda")
    compiled = torch.compile(model)
    before = step(compiled, model, x)
    with tritonmm.use_tritonmm():
        after = []
        names = kernels(lambda: after.append(step(compiled, model, x)))
    ours, others = split_kernels(names)
    assert ours and not others, sorted(names)
    for a, b in zip(before, after[0]):
        assert rel(b, a) < BOUND[torch.float32]


# transformers' LlamaForCausalLM (optional: where transformers is installed), built from a config with random
# weights, small and of sizes no other test compiles; sdpa attention (transformers' default), so its products
# are the projections, the MLP and the head: 15 in the forward pass, 30 in the backward (and attention's where
# torch's lowering decomposes sdpa into products).

def make_llama(dtype, device, attention="sdpa"):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=72, intermediate_size=184, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=211,
                                      max_position_embeddings=64, attn_implementation=attention)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).to(device=device, dtype=dtype)
    ids = torch.randint(0, config.vocab_size, (2, 13), device=device)
    return model, ids


def llama_step(fn, model, ids):
    """Logits, loss and every parameter's gradient of one training step (the loss from the model's labels)."""
    model.zero_grad(set_to_none=True)
    out = fn(input_ids=ids, labels=ids)
    out.loss.backward()
    return [out.logits.detach().clone(), out.loss.detach().clone(), *(p.grad.clone() for p in model.parameters())]


def test_compiled_llama_runs_every_projection_on_tritonmm(launches, rewritten):
    """Compiled in default mode under the switch: no aten product is left in the forward or backward graphs, each
    of the projections' and the head's products is rewritten (15 forward, 30 backward, with attention's where sdpa
    is decomposed) and every rewritten one runs on tritonmm, and
    logits, loss and gradients are float64's within float32's bound."""
    model, ids = make_llama(torch.float32, DEVICE)
    model64 = float64_copy(model)
    want = llama_step(model64, model64, ids)
    with tritonmm.use_tritonmm():
        got = llama_step(torch.compile(model), model, ids)
    assert rewritten, "the pass saw no graph"
    for graph in rewritten:
        assert not PRODUCTS & set(targets(graph)), "an aten product is left for inductor"
    forward, backward = (targets(graph).count(PRODUCT) for graph in rewritten)
    # Attention's products join them where the graph decomposes sdpa (seen: 20 and 38 with the GPU machine's torch
    # 2.11 and its transformers; 15 and 30 with torch 2.14 and transformers 5.24)
    assert forward >= 15 and backward >= 30, (forward, backward)
    assert launches.count(DEVICE) == forward + backward
    names = ["logits", "loss", *(n for n, _ in model.named_parameters())]
    for name, g, w in zip(names, got, want):
        assert rel(g, w) < BOUND[torch.float32], name


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["default", "max-autotune"])
def test_gpu_compiled_llama_runs_only_tritonmm_products(mode):
    """bf16 on the GPU: the profile of two compiled training steps shows tritonmm's kernels and no other
    product's (cuBLAS's, inductor's templates), and each step's results are as close to float64's as aten's.
    Attention as transformers' eager implementation (matmul and softmax), so that its products are GEMMs too,
    not a fused attention kernel (whose names carry CUTLASS's)."""
    model, ids = make_llama(torch.bfloat16, "cuda", attention="eager")
    model64 = float64_copy(model)
    want = llama_step(model64, model64, ids)
    aten = llama_step(model, model, ids)
    results = []
    with tritonmm.use_tritonmm():
        compiled = torch.compile(model, mode=mode)
        names = kernels(lambda: results.extend(llama_step(compiled, model, ids) for _ in range(2)))
    ours, others = split_kernels(names)
    assert ours, f"no tritonmm kernel ran: {sorted(names)}"
    assert not others, f"other products ran: {sorted(others)}"
    for got in results:
        for i, (g, w, a) in enumerate(zip(got, want, aten)):
            assert rel(g, w) < max(BOUND[torch.bfloat16], 2 * rel(a, w)), i
