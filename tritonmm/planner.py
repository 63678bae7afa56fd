"""The planner's entry: ``product(a, b, ...)`` computes act(a @ b + bias) for 2-D operands (FP8 ones
with their scales), or for 3-D ones a batch of products (in one launch, or one product per entry where
each is large: rules.batch_slices), on the operands' device.

A product seen before relaunches from the launch cache (relaunch.py). Otherwise Product (product.py)
plans it (rules.py picks the kernel path and the copies, staging.py makes them), tuning.py picks its
config unless one is pinned, launch.py launches each step, and the launches are cached. Where Triton >= 3.8
runs on Hopper, large plain 16-bit products on the TMA path, and mid-size ones whose 192x128 tiles fill a wave,
run on the Gluon kernel instead (rules.gluon), over the operands as they are where TMA reads their rows slowly
(large ones on its clusters, mid-size ones on the wide schedule, without realign's copies: rules.gluon_as_given),
and tf32x3 products on split operands on its tf32x3 kernel (rules.gluon_tf32x3); these launches are cached for
relaunch too. In CUDA graphs, products of few rows run as their transpose (rules.transposed: 16-bit ones of 2-32
rows, eagerly too where native.cpp repeats the call: rules.graph_bars; IEEE float32 x @ W.T of 17-128 rows, eagerly
too). Callers check arguments first (validation.py; ops.py, library.py, override.py).
Under torch.compile the same code runs on fake tensors (library.py registers it through
torch.library.triton_op): nothing is benchmarked, and launches go through wrap_triton.
"""
import torch

from . import device, launch, native, relaunch, rules, tuning, validation
from .product import Product


def product(a, b, *, precision: str, bias=None, activation: str = "none", out=None, config=None,
            scales=(None, None), out_dtype=None, served: bool = False):
    """act(a @ b + bias) into out (allocated when None, of out_dtype or a's dtype) and returned.
    a is (M, K) and b (K, N), or both 3-D, (Z, M, K) and (Z, K, N), for Z products in one launch, or
    one product per entry where each is large (rules.batch_slices); a batch stride of 0 broadcasts an operand. FP8 operands come with ``scales`` (scale_a,
    scale_b) applied to the fp32 accumulator. ``precision`` as precision.resolve_precision gives it;
    ``config`` a pinned triton.Config or None. ``served``: native.cpp will be told to repeat this call (its first
    call there), so eager calls plan with native's bars (rules.eager_bars). Arguments are assumed checked. In a
    CUDA graph, a product of few rows runs as its transpose, b.T @ a.T into out.T (transposed; eagerly too where
    native.cpp repeats a 16-bit one, and IEEE float32 x @ W.T of 17-128 rows), unless a config is pinned."""
    key = None
    if config is None and not validation.traced(a):
        key = relaunch.key(a, b, out, bias, activation, precision, scales, out_dtype, served=served)
        done = relaunch.launch(relaunch.cached(key), a, b, out, bias, scales, out_dtype)
        if done is not None:
            return done
    if out is None:
        out = new_out(a, b, out_dtype)
    if out.numel() == 0:
        return out
    if key is not None and sliced(a, b, bias, activation, scales, launch.capturing(a), precision):
        for z in range(a.shape[0]):  # each entry on the TMA kernel, relaunched from the cache after the first
            product(a[z], b[z], precision=precision, out=out[z])
        return out
    if a.shape[-1] == 0:  # an empty sum: the epilogue alone
        return out.copy_(epilogue_reference(torch.zeros_like(out, dtype=torch.float32), bias, activation))
    with device.on_device(a.device):
        captured = launch.capturing(a)
        if config is None and transposed(a, b, scales, captured, precision, served):  # stream-, ieee-transpose
            plan = _transposed_plan(a, b, out, precision, bias, activation, scales, captured, served)
            _tune_graph_plan(a, b, out, precision, bias, activation, scales, plan)
            cfg = tuning.choose_config(plan)
            ready = relaunch.compiled(plan, plan.run(cfg)) if key is not None else None  # None in capture
            if ready is not None:
                relaunch.remember(key, ready, plan, cfg, a, b, out)
            return out
        schedule = as_given_gluon(a, b, out, bias, activation, scales, captured) if config is None else None
        # Before any plan: read as it is, no copies (design.md: gluon-misaligned, gluon-wide-as-given).
        if schedule is not None:
            return _gluon(key, (a, b), a, b, out, schedule, None)
        plan = Product(a, b, out, precision, bias, activation, scales, served=served)
        if config is None:
            _tune_graph_plan(a, b, out, precision, bias, activation, scales, plan)
        schedule = gluon_schedule(plan) if config is None else None
        if schedule is not None:  # design.md: gluon-gemm, gluon-wide
            return _gluon(key, (a, b), plan.a, plan.b, out, schedule, plan)
        cfg = config or tuning.choose_config(plan)
        launched = plan.run(cfg)
        ready = relaunch.compiled(plan, launched) if key is not None else None
    if ready is not None:
        relaunch.remember(key, ready, plan, cfg, a, b, out)
    return out


def _tune_graph_plan(a, b, out, precision: str, bias, activation: str, scales, plan) -> None:
    """With tuning on, an eager call's plan tunes the plan a CUDA graph of the same call runs, where nothing can be
    timed, first where that plan may differ: as its transpose, on the TMA kernel, on staged operands
    (differs_when_captured), or planned on a graph's bars because native.cpp repeats this call on the TMA kernel while
    its graph twin is planned unserved and tuned apart (~graph: rules.graph_bars)."""
    if not (plan.can_benchmark and tuning.enabled()):
        return
    swapped = transposed(a, b, scales, True, precision)
    if swapped or plan.differs_when_captured or plan.repeated[1] and plan.path == "tma":
        tuning.choose_config(_transposed_plan(a, b, out, precision, bias, activation, scales) if swapped
                             else Product(a, b, out, precision, bias, activation, scales, captured=True))


def _transposed_plan(a, b, out, precision: str, bias, activation: str, scales, captured: bool = True,
                     served: bool = False) -> Product:
    """The plan of a @ b run as its transpose, b.T @ a.T into out.T, the bias broadcast over out and transposed: a
    CUDA graph's (``captured``), or an eager call's where transposed holds there too (``served`` as product's)."""
    bias = None if bias is None else bias.expand(out.shape).mT
    return Product(b.mT, a.mT, out.mT, precision, bias, activation, scales, captured=captured, served=served,
                   transposed=True)


def eager_plan(a, b, out, precision: str, served: bool = False) -> Product:
    """The plan an eager call of the plain product a @ b into out runs on its tl kernels (``served`` as product's):
    as its transpose where transposed says so, else Product's; what python -m tritonmm.tune tunes."""
    if transposed(a, b, (None, None), False, precision, served):
        return _transposed_plan(a, b, out, precision, None, "none", (None, None), False, served)
    return Product(a, b, out, precision, served=served)


def _gluon(key, given, a, b, out, schedule: str, plan):
    """out = a @ b on the Gluon kernel under schedule (a and b: plan's staged copies where it stages), its launch
    cached under key for relaunches, with plan's copies (not inside capture, as relaunch.compiled)."""
    out, ready = launch.gluon(a, b, out, schedule)
    if key is not None and ready is not None and not launch.capturing(out):
        relaunch.remember(key, ready, plan, launch.gluon_config(schedule), *given, out)
    return out


def sliced(a, b, bias, activation: str, scales, captured: bool, precision: str) -> bool:
    """Whether product runs a plain batch as one product per entry (rules.batch_slices: each entry on the TMA
    kernel, so never IEEE float32 where it keeps off that kernel: design.md ieee-pointer), where no launch of the
    whole batch is cached."""
    facts = device.facts(a.device)
    return a.dim() == 3 and a.shape[-1] != 0 and bias is None and activation == "none" and scales == (None, None) \
        and not validation.traced(a) and rules.tma_precision(facts, precision) \
        and rules.batch_slices(facts, a, b, captured)


def transposed(a, b, scales, captured: bool, precision: str, served: bool = False) -> bool:
    """Whether product runs a @ b as its transpose, b.T @ a.T into out.T (rules.transposed; ``served``: an eager call
    native.cpp repeats, as product's). Real tensors only; ``captured`` first, so that an eager call's plan reads no
    device facts for it but IEEE float32's and those native.cpp repeats on the TMA kernel."""
    repeated = native.repeats_tma(served)
    return (captured or repeated or precision == "ieee" and a.dtype == torch.float32) and not validation.traced(a) \
        and rules.transposed(device.facts(a.device), a, b, scales, captured, precision, repeated)


def new_out(a, b, out_dtype=None) -> torch.Tensor:
    """An uninitialized result for a @ b: a's leading dims and b's last, of out_dtype or a's dtype.
    (new_empty: torch.empty's parsing of dtype and device costs 0.7 us more on the host.)"""
    shape = (*a.shape[:-1], b.shape[-1])
    return a.new_empty(shape) if out_dtype is None else a.new_empty(shape, dtype=out_dtype)


def epilogue_reference(z: torch.Tensor, bias, activation: str) -> torch.Tensor:
    """The fused epilogue in torch ops (for K = 0, and the activation of autograd's forward)."""
    if bias is not None:
        z = z + bias
    if activation == "relu":
        return torch.relu(z)
    if activation in ("gelu", "gelu_tanh"):
        return torch.nn.functional.gelu(z, approximate="tanh" if activation == "gelu_tanh" else "none")
    if activation == "silu":
        return torch.nn.functional.silu(z)
    return z


def chosen(a, b, precision: str, bias=None, activation: str = "none", *, scales=(None, None), out_dtype=None,
           captured: bool = False, served: bool = False):
    """(config, kernel path) that product(a, b, ...) with the same arguments runs with now, eagerly or
    (``captured``) in a CUDA graph, for tables and experiments: the path is "tma", "pointer", "gluon" or
    "gluon cluster" (rules.gluon, rules.gluon_as_given; the config launch.gluon_config's),
    with "+staged" when operands are copied first, "+sliced" (an entry's config) when a batch runs an entry at a
    time and "+transposed" (the config of b.T @ a.T) when a product of few rows runs as its transpose. FP8
    products need their scales and out_dtype (a's dtype when None), as product takes them: both are part
    of the tuning key, and other ones name another product, whose config is looked up (and, where tuning is on and
    nothing is cached, tuned) instead. ``served``: as product's, an eager call native.cpp repeats."""
    if transposed(a, b, scales, captured, precision, served) and a.shape[-1] != 0:  # as product runs it: transposed
        with device.on_device(a.device):
            plan = _transposed_plan(a, b, new_out(a, b, out_dtype), precision, bias, activation, scales, captured,
                                    served)
            return tuning.choose_config(plan), plan.path + ("+staged" if plan.staged else "") + "+transposed"
    if sliced(a, b, bias, activation, scales, captured, precision):  # as product runs it: each entry alone
        cfg, path = chosen(a[0], b[0], precision, captured=captured)
        return cfg, path + "+sliced"
    out = new_out(a, b, out_dtype)
    with device.on_device(a.device):
        schedule = as_given_gluon(a, b, out, bias, activation, scales, captured)
        if schedule is not None:
            return launch.gluon_config(schedule), _LABELS.get(schedule, "gluon")
        plan = Product(a, b, out, precision, bias, activation, scales, captured=captured, served=served)
        staged = "+staged" if plan.staged else ""
        schedule = gluon_schedule(plan)
        if schedule is not None:
            return launch.gluon_config(schedule), "gluon" + staged
        return tuning.choose_config(plan), plan.path + staged


_LABELS = {rules.GLUON_CLUSTER_SCHEDULE: "gluon cluster"}  # chosen()'s path of a schedule read as given


def as_given_gluon(a, b, out, bias, activation: str, scales, captured: bool):
    """The Gluon schedule that takes a product over the caller's operands, before any plan or copy
    (rules.gluon_as_given), or None. Real unbatched tensors only."""
    if a.dim() != 2 or validation.traced(a):
        return None
    return rules.gluon_as_given(device.facts(a.device), a, b, out, bias, activation, scales, captured)


def gluon_schedule(plan):
    """The Gluon schedule a planned product runs on rather than its TMA steps (rules.gluon, rules.gluon_batched for
    a batch, over the operands as the TMA kernel would read them; rules.gluon_tf32x3 for tf32x3 on split operands),
    or None."""
    if plan.path != "tma":
        return None
    if plan.presplit:
        return rules.GLUON_TF32X3_SCHEDULE if rules.gluon_tf32x3(plan.facts, plan.out, plan.bias,
                                                                  plan.constants["ACTIVATION"], plan.batched) else None
    rule = rules.gluon_batched if plan.batched else rules.gluon
    return rule(plan.facts, plan.a, plan.b, plan.out, plan.bias, plan.constants["ACTIVATION"], plan.scales)
