"""Reading post-grad aten graphs for the inductor pass (inductor_pass.py): node values, the pointwise
ops that follow a product, and which activation they compute.

An activation reaches the pass decomposed (gelu as mul, erf, add, mul), and its decomposition differs
across torch versions, so it is recognised by what it computes rather than by its ops: the pointwise
nodes that consume only the product are run on a float64 probe on the CPU (whatever the graph's device
and dtype) and compared with each activation tritonmm fuses (docs/compile.md).
"""
import torch
import torch.nn.functional as F

aten = torch.ops.aten

# The activations linear's epilogue fuses (kernels/tiles.py ACTIVATIONS), as torch computes them.
ACTIVATIONS = {
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
VIEWS = (aten.view.default, aten.reshape.default, aten._unsafe_view.default)
# Activations whose epilogue is special-function work (exp, erf, tanh and a divide an element) that the
# kernel's epilogue does not hide: they are fused only where inductor would otherwise give them a kernel
# of their own, not where every reader is a pointwise op that inductor computes them in for free.
# design.md: epilogue-activation.
TRANSCENDENTAL = ("gelu", "gelu_tanh", "silu")


def val(node):
    """The fake tensor a node's value has in the graph's metadata, or None (a literal, no metadata)."""
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else None


def tensor_vals(*nodes):
    vals = [val(n) for n in nodes]
    return vals if all(isinstance(v, torch.Tensor) for v in vals) else None


def is_call(node, *targets) -> bool:
    return isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in targets


def pointwise(node) -> bool:
    return (node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and torch.Tag.pointwise in node.target.tags and not node.target._schema.is_mutable)


def pointwise_region(head):
    """The pointwise nodes computed from ``head`` alone (each input is head or one of them), or None
    where they are more than an activation would be."""
    region, frontier = set(), list(head.users)
    while frontier:
        node = frontier.pop()
        if node in region or not pointwise(node):
            continue
        if all(i is head or i in region for i in node.all_input_nodes):
            region.add(node)
            if len(region) > _MAX_ACTIVATION_NODES:
                return None
            frontier.extend(node.users)
    return region


def find_activation(end, order):
    """(name, last, nodes, view) where pointwise ``nodes`` compute activation ``name`` of ``end``'s
    value, ``last`` holding the result in end's dtype and shape, and nothing outside them reads end or
    any of them but last; else None. ``view`` is the reshape between end and the activation where there
    is one (a 3-D Linear's input is flattened for the product and its result viewed back before the
    activation), else None. Pointwise ops may follow the activation (relu(z) * 2), so each node of the
    region computed from end alone is tried as ``last``, latest first. ``order``: graph positions."""
    users = list(end.users)
    view = users[0] if len(users) == 1 and is_call(users[0], *VIEWS) else None
    head = view or end
    region = pointwise_region(head)
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
        vals = tensor_vals(head, last)
        # (dims, not sizes: sizes may be symbolic, and comparing them would add guards)
        if vals is None or vals[0].dtype != vals[1].dtype or vals[0].dim() != vals[1].dim():
            continue  # an upcast or a broadcast the product's own result cannot stand for
        name = _computes(head, sorted(nodes, key=order.__getitem__), last)
        if name is not None:
            return name, last, nodes, view
    return None


def read_pointwise(node) -> bool:
    """Whether ``node`` has readers and each one, through reshapes, is a pointwise op: one inductor
    fuses node's computation into."""
    frontier = list(node.users)
    while frontier:
        user = frontier.pop()
        if is_call(user, *VIEWS):
            frontier.extend(user.users)
        elif not pointwise(user):
            return False
    return bool(node.users)


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
    dtype = val(head).dtype
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
    for name, fn in ACTIVATIONS.items():
        want = fn(_PROBE)
        err = ((got - want).abs() / want.abs().clamp_min(1.0)).max().item()
        if err <= _MATCH_TOLERANCE:  # (False for a NaN)
            matches.append(name)
    return matches[0] if len(matches) == 1 else None


class _NotAnActivation(Exception):
    """A probe that cannot be one of the activations (_computes)."""
