"""tritonmm in torch.compile'd graphs: an inductor post-grad pass that rewrites aten's products
into tritonmm's operators while use_tritonmm() / enable() is on (docs/compile.md).

Inductor lowers aten.mm, addmm and bmm itself: to an extern call of aten's ``.out`` kernel (which
the aten override takes at run time), or, under max-autotune, to whichever of its own Triton
templates times fastest, which never reaches the dispatcher. This pass runs on each forward and
backward graph after inductor's own post-grad passes and replaces the products tritonmm takes with

    torch.ops.tritonmm.mm / bmm(a, b, precision, None)
    torch.ops.tritonmm.linear(x, weight, bias, activation, precision, None)

The operators are opaque to inductor here (they lower to a call of the operator when the graph runs),
so tritonmm's planner keeps its own kernel, tile and tuning choices. A bias add (addmm, or the mm + add
inductor makes of an addmm followed by pointwise ops) and a following relu, gelu, gelu_tanh or silu
go into linear's epilogue. An activation arrives decomposed (gelu as mul, erf, add, mul), and its
decomposition differs across torch versions, so it is recognised by what it computes rather than
by its ops: the pointwise nodes that consume only the product are run on a float64 probe on the CPU
(whatever the graph's device and dtype) and compared with each activation tritonmm fuses.

The pass goes into ``torch._inductor.config.post_grad_custom_post_pass`` when enabling, chained to
whatever pass was there (which runs first), and that pass is put back when disabling. Its uuid()
keys inductor's FX graph cache (and AOTAutograd's): graphs compiled while enabled are never
reused while disabled, nor the other way round.
"""
import functools
import hashlib

import torch
import torch.nn.functional as F
from torch._inductor import config as inductor_config
from torch._inductor import custom_graph_pass

from . import library, routing

aten = torch.ops.aten

# torch 2.14 passes is_inference to passes of this type; where it is missing, no user pass can
# be of it either, and the plain type serves.
_InferenceAware = getattr(custom_graph_pass, "CustomInferenceAwareGraphPass", None)
_Base = _InferenceAware or custom_graph_pass.CustomGraphPass

# The activations linear's epilogue fuses (kernels/tiles.py ACTIVATIONS), as torch computes them.
_ACTIVATIONS = {
    "relu": torch.relu,
    "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu,
}
# Pointwise nodes followed from a product while looking for its activation; gelu_tanh, the longest
# decomposition seen (torch 2.14), has 9, and 11 with a 16-bit product's casts to float32 and back.
_MAX_ACTIVATION_NODES = 16
# The probe an activation candidate runs on, in float64 on the CPU: both signs, the kink at 0, gelu's
# tails, and |x| of 2 to 3, where gelu and gelu_tanh are furthest apart (4.7e-4 at 2.7; every other
# pair of activations differs by more than 0.1 somewhere on it).
_PROBE = torch.linspace(-8.0, 8.0, 321, dtype=torch.float64, device="cpu")
# How far (|got - want| / max(|want|, 1), at every probe point) a candidate may be from an activation
# and still be it: float32's unit roundoff, the rounding of the float32 epilogue that computes the
# activation in linear. Evaluated in float64, torch's decompositions are within 1e-15 of the
# activations they decompose, and the nearest two activations are 8000 times this apart.
_MATCH_TOLERANCE = 2.0 ** -24
# The reshapes that may stand between a product and its activation.
_VIEWS = (aten.view.default, aten.reshape.default, aten._unsafe_view.default)


@functools.lru_cache(maxsize=None)
def _source_hash() -> str:
    """A hash of the files whose code decides what a rewritten graph holds: this pass, the routing
    rules and the operators' schemas."""
    digest = hashlib.sha256()
    for module in (__file__, routing.__file__, library.__file__):
        with open(module, "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def _passes(value) -> tuple:
    """A post_grad_custom_post_pass setting as the passes it holds (None, one pass, or a list or tuple)."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class TritonmmPass(_Base):
    """The post-grad pass: the passes it chains (the setting before enable(), run first, as they
    were given), then rewrite(graph) while installed (from enable() to disable())."""

    def __init__(self, chained=None):
        for p in _passes(chained):
            if not callable(p):
                raise TypeError(f"a post-grad pass must be callable (a CustomGraphPass, or a function of a "
                                f"torch.fx.Graph), got {type(p).__name__}: torch._inductor.config."
                                f"post_grad_custom_post_pass holds {chained!r}")
        self.chained = chained

    def __call__(self, graph: torch.fx.Graph, is_inference: bool = False) -> None:
        for p in _passes(self.chained):
            if _InferenceAware is not None and isinstance(p, _InferenceAware):
                p(graph, is_inference=is_inference)
            else:
                p(graph)
        # A copy of this pass left in the config after disable() (inside a list the user built, or put
        # back by an inductor_config.patch block) does nothing of its own.
        if _state["installed"]:
            rewrite(graph)

    def uuid(self):
        """None (no caching) where a chained pass has no uuid, as inductor does for that pass alone.
        Otherwise the chained uuids with what decides the rewrite: the code, whether tritonmm is
        enabled, the float32 precision baked into the operators' calls and the devices taken."""
        chained = []
        for p in _passes(self.chained):
            uuid = p.uuid() if isinstance(p, custom_graph_pass.CustomGraphPass) else None
            if uuid is None:
                return None
            chained.append(uuid)
        mine = ("tritonmm", _source_hash(), routing.default_precision(torch.float32), routing.dispatch_keys()) \
            if _state["installed"] else ("tritonmm", "disabled")
        return (mine, tuple(chained))


# Inductor settings while enabled. shape_padding: pad_mm pads unaligned products' operands (a copy of
# each, every call) to suit cuBLAS and inductor's own templates, and tritonmm reads them as they are.
_SETTINGS = {"shape_padding": False}
# installed: between install() and uninstall(), which enable() and disable() call; settings: the
# values _SETTINGS replaced.
_state = {"installed": False, "settings": {}}


def install() -> None:
    """Puts a TritonmmPass into inductor's config, chaining the pass there now, and _SETTINGS, saving
    the values they replace. Installing twice is harmless."""
    if not isinstance(inductor_config.post_grad_custom_post_pass, TritonmmPass):
        inductor_config.post_grad_custom_post_pass = TritonmmPass(inductor_config.post_grad_custom_post_pass)
    for name, value in _SETTINGS.items():
        if hasattr(inductor_config, name) and name not in _state["settings"]:
            _state["settings"][name] = getattr(inductor_config, name)
            setattr(inductor_config, name, value)
    _state["installed"] = True


def uninstall() -> None:
    """Puts back the pass install() chained and the settings it replaced. A pass or setting the user
    has changed since is theirs, and stays."""
    _state["installed"] = False
    current = inductor_config.post_grad_custom_post_pass
    if isinstance(current, TritonmmPass):
        inductor_config.post_grad_custom_post_pass = current.chained
    for name, previous in _state["settings"].items():
        if getattr(inductor_config, name) == _SETTINGS[name]:
            setattr(inductor_config, name, previous)
    _state["settings"].clear()


# Rewriting.

def _val(node):
    """The fake tensor a node's value has in the graph's metadata, or None (a literal, no metadata)."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def _tensor_vals(*nodes):
    vals = [_val(n) for n in nodes]
    return vals if all(isinstance(v, torch.Tensor) for v in vals) else None


def _is(node, *targets) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


def _bias_of(product, bias) -> bool:
    """Whether ``bias`` is a (N,) vector of the product's dtype and device, linear's bias."""
    vals = _tensor_vals(product, bias)
    if vals is None:
        return False
    out, b = vals
    n = out.shape[-1]
    # Both sizes static and equal: a size-1 bias broadcast, or a symbolic size, is left alone
    # (comparing symbolic sizes here would add guards).
    return (b.dim() == 1 and isinstance(n, int) and isinstance(b.shape[0], int) and b.shape[0] == n
            and routing.takes_tensors(out, b))


def _linear_form(node):
    """(x, b, bias, end) where ``end``'s value is x @ b + bias for 2-D x and b, a (N,) bias (or None):
    an addmm with beta = alpha = 1, or an mm whose one user adds the bias (inductor unfuses addmm
    that way on GPUs where pointwise ops follow it). None for other nodes."""
    if _is(node, aten.addmm.default):
        bias, x, b = node.args[:3]
        if node.kwargs.get("beta", 1) == 1 and node.kwargs.get("alpha", 1) == 1 and _bias_of(node, bias):
            return x, b, bias, node
        return None
    if not _is(node, aten.mm.default):
        return None
    x, b = node.args[:2]
    if len(node.users) == 1:
        (add,) = node.users
        if _is(add, aten.add.Tensor) and add.kwargs.get("alpha", 1) == 1 and len(add.args) == 2:
            bias = add.args[1] if add.args[0] is node else add.args[0]
            if bias is not node and _bias_of(node, bias) and _tensor_vals(add) and _val(add).dtype == _val(node).dtype:
                return x, b, bias, add
    return x, b, None, node


def _pointwise(node) -> bool:
    return (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and torch.Tag.pointwise in node.target.tags and not node.target._schema.is_mutable)


def _pointwise_region(head):
    """The pointwise nodes computed from ``head`` alone (each input is head or one of them), or None
    where they are more than an activation would be."""
    region, frontier = set(), list(head.users)
    while frontier:
        node = frontier.pop()
        if node in region or not _pointwise(node):
            continue
        if all(i is head or i in region for i in node.all_input_nodes):
            region.add(node)
            if len(region) > _MAX_ACTIVATION_NODES:
                return None
            frontier.extend(node.users)
    return region


def _activation(end, order):
    """(name, last, nodes, view) where pointwise ``nodes`` compute activation ``name`` of ``end``'s
    value, ``last`` holding the result in end's dtype and shape, and nothing outside them reads end or
    any of them but last; else None. ``view`` is the reshape between end and the activation where there
    is one (a 3-D Linear's input is flattened for the product and its result viewed back before the
    activation), else None. Pointwise ops may follow the activation (relu(z) * 2), so each node of the
    region computed from end alone is tried as ``last``, latest first. ``order``: graph positions."""
    users = list(end.users)
    view = users[0] if len(users) == 1 and _is(users[0], *_VIEWS) else None
    head = view or end
    region = _pointwise_region(head)
    if not region:
        return None
    for last in sorted(region, key=order.__getitem__, reverse=True):
        nodes, pending = {last}, [last]
        while pending:  # last's ancestors within the region
            for i in pending.pop().all_input_nodes:
                if i in region and i not in nodes:
                    nodes.add(i)
                    pending.append(i)
        if any(u not in nodes for u in head.users) or any(u not in nodes for n in nodes - {last} for u in n.users):
            continue  # something else reads the product or an intermediate value
        vals = _tensor_vals(head, last)
        # (dims, not sizes: sizes may be symbolic, and comparing them would add guards)
        if vals is None or vals[0].dtype != vals[1].dtype or vals[0].dim() != vals[1].dim():
            continue  # an upcast or a broadcast the product's own result cannot stand for
        name = _computes(head, sorted(nodes, key=order.__getitem__), last)
        if name is not None:
            return name, last, nodes, view
    return None


def _exactly_holds(dtype, value_dtype) -> bool:
    """Whether floating ``dtype`` represents every value of floating ``value_dtype`` exactly: itself, or
    float32 or float64 at least as wide (float32 holds every bfloat16 and float16)."""
    return dtype == value_dtype or (dtype in (torch.float32, torch.float64) and dtype.itemsize >= value_dtype.itemsize)


def _computes(head, nodes, last):
    """The activation that ``nodes`` (in graph order) compute of ``head``'s value, or None.

    The nodes run on a float64 CPU probe, whatever the graph's device and dtype, so that rounding in
    the graph's dtype (and the device's or torch version's kernels for erf, tanh, exp) plays no part:
    the floating dtypes they name (the upcast of a 16-bit product to float32 and the cast back) are
    float64 for the probe. A cast to a dtype that does not hold every value of head's is a rounding
    the graph asks for, which linear's epilogue would not do: no match. The result is compared with
    each activation in float64; the activation within _MATCH_TOLERANCE of it at every probe point is
    the match, where exactly one is (two within it would be too close to tell apart)."""
    dtype = _val(head).dtype
    if not dtype.is_floating_point:
        return None

    def probe_arg(value):
        if isinstance(value, torch.dtype) and value.is_floating_point:
            if not _exactly_holds(value, dtype):
                raise _NotAnActivation
            return torch.float64
        return value

    values = {head: _PROBE}
    try:
        for node in nodes:
            args, kwargs = torch.fx.map_arg((node.args, node.kwargs), lambda n: values[n])
            args, kwargs = torch.fx.node.map_aggregate((args, kwargs), probe_arg)
            values[node] = node.target(*args, **kwargs)
        got = values[last]
        if not (isinstance(got, torch.Tensor) and got.dtype == torch.float64 and got.device.type == "cpu"
                and got.shape == _PROBE.shape):
            return None
    except Exception:  # an op the probe cannot run (a device argument, a shape it bakes in), or a cast
        return None    # that rounds (_NotAnActivation): no match
    matches = []
    for name, fn in _ACTIVATIONS.items():
        want = fn(_PROBE)
        err = ((got - want).abs() / want.abs().clamp_min(1.0)).max().item()
        if err <= _MATCH_TOLERANCE:  # (False for a NaN)
            matches.append(name)
    return matches[0] if len(matches) == 1 else None


class _NotAnActivation(Exception):
    """A probe that cannot be one of the activations (_computes)."""


def _insert(graph, before, target, args, like):
    """A call of ``target`` inserted before node ``before``, with ``like``'s metadata value."""
    with graph.inserting_before(before):
        node = graph.call_function(target, args)
    node.meta["val"] = like
    return node


def _is_transpose(node) -> bool:
    """A 2-D transposed view: aten.t, or a permute of a 2-D tensor (post-grad graphs have only permute)."""
    return _is(node, aten.t.default) or (_is(node, aten.permute.default) and [d % 2 for d in node.args[1]] == [1, 0])


def _weight(graph, b, before):
    """linear's weight for a product with b: the (N, K) tensor whose transpose b is. Where b is itself
    a transposed view (inductor's x @ W.T), its source; otherwise a transposed view of b."""
    if _is_transpose(b):
        return b.args[0]
    return _insert(graph, before, aten.permute.default, (b, [1, 0]), _val(b).permute(1, 0))


def _erase_dead(graph, nodes, order) -> None:
    """Erases those of ``nodes`` left without users, latest first, so that each one's inputs have lost
    their users by the time they are looked at."""
    for node in sorted(nodes, key=order.__getitem__, reverse=True):
        if not node.users:
            graph.erase_node(node)


def _replace_bmm(graph, node, order) -> bool:
    a, b = node.args[:2]
    vals = _tensor_vals(node, a, b)
    if vals is None or not routing.takes_tensors(*vals):
        return False
    new = _insert(graph, node, torch.ops.tritonmm.bmm.default,
                  (a, b, routing.default_precision(vals[0].dtype), None), vals[0])
    node.replace_all_uses_with(new)
    _erase_dead(graph, [node], order)
    return True


def _replace_linear(graph, node, order) -> bool:
    """An mm or addmm, with the bias add and activation that follow it (_linear_form, _activation),
    as tritonmm.linear, or tritonmm.mm where it has neither."""
    form = _linear_form(node)
    if form is None:
        return False
    x, b, bias, end = form
    vals = _tensor_vals(end, x, b)
    if vals is None or not routing.takes_tensors(*vals):
        return False
    precision = routing.default_precision(vals[0].dtype)
    fused = _activation(end, order)
    activation, last, region, view = fused if fused is not None else ("none", end, set(), None)
    # Inserted where the last replaced node is: every input is defined by then.
    if bias is None and activation == "none":
        new = _insert(graph, last, torch.ops.tritonmm.mm.default, (x, b, precision, None), _val(end))
    else:
        new = _insert(graph, last, torch.ops.tritonmm.linear.default,
                      (x, _weight(graph, b, last), bias, activation, precision, None), _val(end))
    if view is not None:
        new = _insert(graph, last, view.target, (new, *view.args[1:]), _val(last))
    last.replace_all_uses_with(new)
    dead = {node, end, *region} | ({view} if view is not None else set())
    if _is_transpose(b):
        dead.add(b)  # the x @ W.T view linear reads W through instead, where nothing else needs it
    _erase_dead(graph, dead, order)
    return True


def rewrite(graph: torch.fx.Graph) -> int:
    """Replaces the products tritonmm takes in ``graph`` (a post-grad aten graph) by tritonmm's
    operators, fusing bias adds and activations into linear; returns how many products it replaced."""
    if not isinstance(graph, torch.fx.Graph):
        raise TypeError(f"rewrite takes a torch.fx.Graph (a GraphModule's .graph), got {type(graph).__name__}")
    order = {node: position for position, node in enumerate(graph.nodes)}
    replaced = 0
    # Nodes erased on the way (a bias add, an activation's) are pointwise: neither replace function
    # takes them when the loop reaches them.
    for node in list(graph.nodes):
        replace = _replace_bmm if _is(node, aten.bmm.default) else _replace_linear
        replaced += replace(graph, node, order)
    return replaced
