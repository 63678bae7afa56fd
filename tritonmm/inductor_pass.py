"""tritonmm in torch.compile'd graphs: an inductor post-grad pass that rewrites aten's products
into tritonmm's operators while use_tritonmm() / enable() is on (docs/compile.md).

Inductor lowers aten.mm, addmm and bmm itself: to an extern call of aten's ``.out`` kernel (which
the aten override takes at run time), or, under max-autotune, to whichever of its own Triton
templates times fastest, which never reaches the dispatcher. This pass runs on each forward and
backward graph after inductor's own post-grad passes and replaces the products tritonmm takes with

    torch.ops.tritonmm.eager_product(a, b, bias, activation, precision, None)

an operator opaque to inductor (it lowers to a call of the operator when the graph runs), so
tritonmm's planner keeps its own kernel, tile and tuning choices. A bias add (addmm, or the mm + add
inductor makes of an addmm followed by pointwise ops) and a following relu, gelu, gelu_tanh or silu
go into linear's epilogue; gelu, gelu_tanh and silu only where something other than pointwise ops
reads them (a SwiGLU's silu(gate) * up stays inductor's, which computes it in the multiply's kernel).
graph_match.py recognises the activation, whatever ops a torch version decomposes it into.

The pass goes into ``torch._inductor.config.post_grad_custom_post_pass`` when enabling, chained to
whatever pass was there (which runs first), and that pass is put back when disabling. Its uuid()
keys inductor's FX graph cache (and AOTAutograd's): graphs compiled while enabled are never
reused while disabled, nor the other way round.
"""
import functools
import hashlib

import torch
from torch._inductor import config as inductor_config
from torch._inductor import custom_graph_pass

from . import graph_match, library, routing
from .graph_match import TRANSCENDENTAL, find_activation, is_call, read_pointwise, tensor_vals, val

aten = torch.ops.aten

# torch 2.14 passes is_inference to passes of this type; where it is missing, no user pass can
# be of it either, and the plain type serves.
_InferenceAware = getattr(custom_graph_pass, "CustomInferenceAwareGraphPass", None)
_Base = _InferenceAware or custom_graph_pass.CustomGraphPass


@functools.lru_cache(maxsize=None)
def _source_hash() -> str:
    """A hash of the files whose code decides what a rewritten graph holds: this pass, its reading of
    graphs (graph_match), the routing rules and the operators' schemas."""
    digest = hashlib.sha256()
    for module in (__file__, graph_match.__file__, routing.__file__, library.__file__):
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

def _bias_of(product, bias) -> bool:
    """Whether ``bias`` is a (N,) vector of the product's dtype and device, linear's bias."""
    vals = tensor_vals(product, bias)
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
    if is_call(node, aten.addmm.default):
        bias, x, b = node.args[:3]
        if node.kwargs.get("beta", 1) == 1 and node.kwargs.get("alpha", 1) == 1 and _bias_of(node, bias):
            return x, b, bias, node
        return None
    if not is_call(node, aten.mm.default):
        return None
    x, b = node.args[:2]
    if len(node.users) == 1:
        (add,) = node.users
        if is_call(add, aten.add.Tensor) and add.kwargs.get("alpha", 1) == 1 and len(add.args) == 2:
            bias = add.args[1] if add.args[0] is node else add.args[0]
            if bias is not node and _bias_of(node, bias) and tensor_vals(add) and val(add).dtype == val(node).dtype:
                return x, b, bias, add
    return x, b, None, node


def _insert(graph, before, target, args, like):
    """A call of ``target`` inserted before node ``before``, with ``like``'s metadata value."""
    with graph.inserting_before(before):
        node = graph.call_function(target, args)
    node.meta["val"] = like
    return node


def _erase_dead(graph, nodes, order) -> None:
    """Erases those of ``nodes`` left without users, latest first, so that each one's inputs have lost
    their users by the time they are looked at."""
    for node in sorted(nodes, key=order.__getitem__, reverse=True):
        if not node.users:
            graph.erase_node(node)


# What the pass puts in the graph: the opaque operator the planner runs when the graph runs. The graph is
# past autograd, so the differentiable operators' wrappers (tritonmm::mm, linear, bmm) would only cost
# host time: 181 us a call against 61 in a compiled training step (design.md: graph-pass-operator).
_PRODUCT = torch.ops.tritonmm.eager_product.default


def _replace_bmm(graph, node, order) -> bool:
    a, b = node.args[:2]
    vals = tensor_vals(node, a, b)
    if vals is None or not routing.takes_tensors(*vals):
        return False
    new = _insert(graph, node, _PRODUCT, (a, b, None, "none", routing.default_precision(vals[0].dtype), None),
                  vals[0])
    node.replace_all_uses_with(new)
    _erase_dead(graph, [node], order)
    return True


def _replace_linear(graph, node, order) -> bool:
    """An mm or addmm, with the bias add and activation that follow it (_linear_form, find_activation),
    as one product with that epilogue."""
    form = _linear_form(node)
    if form is None:
        return False
    x, b, bias, end = form
    vals = tensor_vals(end, x, b)
    if vals is None or not routing.takes_tensors(*vals):
        return False
    precision = routing.default_precision(vals[0].dtype)
    fused = find_activation(end, order)
    if fused is not None and fused[0] in TRANSCENDENTAL and read_pointwise(fused[1]):
        fused = None  # inductor computes it in its readers' kernel for free (TRANSCENDENTAL)
    activation, last, region, view = fused if fused is not None else ("none", end, set(), None)
    # Inserted where the last replaced node is: every input is defined by then.
    new = _insert(graph, last, _PRODUCT, (x, b, bias, activation, precision, None), val(end))
    if view is not None:
        new = _insert(graph, last, view.target, (new, *view.args[1:]), val(last))
    last.replace_all_uses_with(new)
    _erase_dead(graph, {node, end, *region} | ({view} if view is not None else set()), order)
    return True


def rewrite(graph: torch.fx.Graph) -> int:
    """Replaces the products tritonmm takes in ``graph`` (a post-grad aten graph) by tritonmm's
    opaque operator, bias adds and activations fused into its epilogue; returns how many it replaced."""
    if not isinstance(graph, torch.fx.Graph):
        raise TypeError(f"rewrite takes a torch.fx.Graph (a GraphModule's .graph), got {type(graph).__name__}")
    order = {node: position for position, node in enumerate(graph.nodes)}
    replaced = 0
    # Nodes erased on the way (a bias add, an activation's) are pointwise: neither replace function
    # takes them when the loop reaches them.
    for node in list(graph.nodes):
        replace = _replace_bmm if is_call(node, aten.bmm.default) else _replace_linear
        replaced += replace(graph, node, order)
    return replaced
