"""Relaunching compiled kernels (fast_launch.py): keys that tell specializations apart, the
direct launch on the GPU, and the fallback to kernel[grid]."""
import inspect

import pytest
import torch
import triton
from conftest import rel_err

import tritonmm
from tritonmm import config_space, fast_launch, layout, native, planner, product, relaunch, splits, thresholds, tuning
from tritonmm.tune import operands


def key(a, b, out, bias=None, precision="native", activation="none"):
    return relaunch.key(a, b, out, bias, activation, precision)


def test_keys_tell_specializations_apart(device):
    a, b = operands(32, 48, 64, torch.float16, "NN", device)
    out = torch.empty(32, 48, dtype=torch.float16, device=device)
    base = key(a, b, out)
    assert key(a, b, out) == base
    big = torch.empty(33 * 64 + 8, dtype=torch.float16, device=device)
    shifted = big[1:1 + 32 * 64].view(32, 64)  # same shape and strides, a pointer off 16-byte alignment
    assert key(shifted, b, out) != base
    assert key(a.T.contiguous().T, b, out) != base  # strides
    assert key(a[:31], b, out[:31]) != base  # shape
    assert key(a, b, out, bias=torch.empty(48, dtype=torch.float16, device=device)) != base
    assert key(a, b, out, activation="relu") != base
    # a call native.cpp repeats plans on its bars: an unserved call's launches are not its own (relaunch.key)
    assert relaunch.key(a, b, out, None, "none", "native", served=True) != base
    before = tuning.generation
    tuning.forget()
    assert tuning.generation != before and key(a, b, out) != base


class _Refusing:
    """A compiled kernel whose launcher rejects its arguments, as another Triton's might."""
    function = packed_metadata = None
    launch_metadata = staticmethod(lambda *args: None)

    @staticmethod
    def run(*args):
        raise TypeError("function takes exactly 31 arguments (25 given)")


class _Recording:
    """A compiled kernel that records what its launcher is handed."""
    function = packed_metadata = None
    launch_metadata = staticmethod(lambda *args: None)

    def __init__(self):
        self.calls = []

    def run(self, *args):
        self.calls.append(args)


@pytest.mark.parametrize("descriptors", [3, 2], ids=["C descriptor", "C pointer"])
def test_tma_relaunch_passes_every_tensor_after_the_descriptors(descriptors, monkeypatch):
    """The descriptors of A, B and C (C's where the kernel stores through one; C_DESC false leaves two) are
    re-pointed; a C without one passes as it is, and bias and FP8 scales follow in order."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    x = torch.randn(32, 32)
    kernel = _Recording()
    compiled = fast_launch.Compiled(kernel, (4,), ("M", "N"),
                                    descriptors=[TensorDescriptor.from_tensor(x, [16, 16])] * descriptors)
    tensors = (torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 31), "bias", "scale_a", "scale_b")
    assert compiled(tensors, 0)
    args = kernel.calls[0][9:]  # after grid (3), stream, function, metadata, launch metadata, enter and exit hooks
    assert [d.base for d in args[:descriptors]] == list(tensors[:descriptors])
    assert all(arg is t for arg, t in zip(args[descriptors:3], tensors[descriptors:3]))
    assert args[3:] == ("bias", "scale_a", "scale_b", "M", "N")


def test_relaunch_of_a_kernel_that_takes_only_the_descriptors(monkeypatch):
    """The Gluon kernel takes A's, B's and C's descriptors and no bias or scales (tensors=3): a relaunch hands
    it the three re-pointed descriptors, then the arguments after them, whatever else the caller passes."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    x = torch.randn(32, 32)
    kernel = _Recording()
    compiled = fast_launch.Compiled(kernel, (4,), ("M", "N", "K"), [TensorDescriptor.from_tensor(x, [16, 16])] * 3,
                                    tensors=3)
    tensors = (torch.randn(32, 32), torch.randn(32, 32), torch.randn(32, 32), None, None, None)
    assert compiled(tensors, 0)
    args = kernel.calls[0][9:]
    assert [d.base for d in args[:3]] == list(tensors[:3]) and args[3:] == ("M", "N", "K")


def test_launches_over_rows_take_addresses_of_the_row_views(monkeypatch):
    """A wave-tail split's relaunch hands each launch its rows of A, C, a bias that varies by row and A's scales at
    the addresses row views of the call's own tensors would have (offsets kept from the first call's, whose
    storage differs), and B and B's scales as they are."""
    monkeypatch.setattr(fast_launch, "current_stream", lambda index: 0)
    M, N, K = 40, 24, 16

    def tensors():  # A K-major, C's rows padded, a bias by row, row and column scales
        return (torch.randn(K, M).T, torch.randn(K, N), torch.empty(M, N + 3)[:, :N], torch.randn(M, 1),
                torch.rand(M, 1), torch.rand(1, N))
    rows = ((0, 32), (32, M))
    calls = []
    launches = tuple((lambda given, stream: calls.append(given) or True) for _ in rows)
    entry = relaunch.Entry(launches, None, (0, 0, 0), ((M, N), (N + 3, 1)), None,
                           tuple(layout.row_offsets(r0, r1, *tensors()) for r0, r1 in rows))
    a, b, out, bias, scale_a, scale_b = given = tensors()
    assert relaunch._launch_entry(entry, a, b, out, bias, (scale_a, scale_b), None) is out
    assert len(calls) == 2
    for passed, (r0, r1) in zip(calls, rows):
        views = layout.row_views(r0, r1, *given)
        assert [t.data_ptr() for t in passed] == [v.data_ptr() for v in views]
        assert passed[1] is b and passed[5] is scale_b and passed[0] is not a


def test_a_tail_in_slices_of_k_relaunches_its_three_launches_on_their_rows(monkeypatch):
    """A wave-tail split whose tail runs in slices of K (design.md: tail-slices) is cached as the head over the call's
    rows, the slices over A's last rows into a workspace of (slices, tail rows, N) allocated per call, and their sum
    from it into C's last rows with the bias's: each at the addresses row views of the call's own tensors would have."""
    monkeypatch.setattr(fast_launch, "current_stream", lambda index: 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "tail_slices_min_k", 0)
    M, N, K = 160, 40, 2400
    a, b = torch.randn(K, M).bfloat16().T, torch.randn(K, N).bfloat16()  # A K-major: a weight gradient's
    out, bias = torch.empty(M, N, dtype=torch.bfloat16), torch.randn(M, 1).bfloat16()
    plan = product.Product(a, b, out, "native", bias=bias, captured=False)
    plan._use_tma(a, b, out)
    cfg = config_space.variant(config_space.make_config(32, 32, 32, 4, 2), TAIL=1)
    rows = plan.tail_rows(cfg)
    assert rows and plan.tail_launch(M - rows) == (splits.TAIL_SLICE_NARROW, 2) and plan.launches(cfg) == 3
    # float32's operands (a pinned TAIL config: its family offers none) keep the tail whole: 128x128 slices of 4-byte
    # operands would not fit shared memory
    wide = product.Product(a.float(), b.float(), out.float(), "tf32", captured=False)
    assert wide.tail_launch(M - rows)[1] == 1
    calls = []
    ready = [lambda given, stream, i=i: calls.append((i, given)) or True for i in range(3)]
    relaunch.remember("tail-key", ready, plan, cfg, a, b, out)
    entry = relaunch._entries.pop("tail-key")
    assert entry.workspace == (2, M - rows, N)
    a2, b2, out2, bias2 = torch.randn(K, M).bfloat16().T, torch.randn(K, N).bfloat16(), torch.empty_like(out), \
        torch.randn(M, 1).bfloat16()
    assert relaunch._launch_entry(entry, a2, b2, out2, bias2, (None, None), None) is out2
    (_, head), (_, slices), (_, total) = calls
    views = [layout.row_views(r0, r1, a2, b2, out2, bias2, None, None) for r0, r1 in ((0, rows), (rows, M))]
    assert [t.data_ptr() for t in head[:4]] == [v.data_ptr() for v in views[0][:4]]
    ws = slices[2]
    assert slices[0].data_ptr() == views[1][0].data_ptr() and slices[1] is b2 and ws.shape == (2, M - rows, N)
    assert total[0] is ws and [t.data_ptr() for t in total[1:3]] == [views[1][2].data_ptr(), views[1][3].data_ptr()]


def _launcher_36(c_launch, descriptors=0, meta=None):
    """A launcher laid out as Triton 3.6's CudaLauncher: for a kernel with tensor descriptors, its
    ``launch`` is a closure over the C function that expands each descriptor first."""
    def wrap(launcher, tensordesc_indices, tensordesc_meta):
        def inner(*args):
            return launcher, tensordesc_indices, tensordesc_meta
        return inner

    class CudaLauncher:
        global_scratch_size = profile_scratch_size = 0
        launch_cooperative_grid, launch_pdl = False, True
        launch = c_launch if not descriptors else wrap(c_launch, set(range(descriptors)), meta)
        calls = []  # what Triton's own launcher was handed

        def __call__(self, gridX, gridY, gridZ, stream, function, *args):
            self.calls.append((gridX, gridY, gridZ, stream, function, *args))
    return CudaLauncher()


class _CLaunch:
    """Stands in for the C launch function (not a Python function, as the layout check expects)."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)


class _Kernel36:
    function, packed_metadata = "function", "metadata"

    def __init__(self, run):
        self.run = run


def _as_36(monkeypatch, expand):
    from triton.backends.nvidia import driver
    monkeypatch.setattr(driver, "_BASE_ARGS_FORMAT", "iiiKKppOOOOOO", raising=False)
    monkeypatch.setattr(driver, "make_tensordesc_arg", expand)


def test_direct_launch_under_a_36_launcher_caches_tensor_maps_by_address(monkeypatch):
    """Under Triton 3.6's launcher layout, a TMA relaunch calls the C launch function with each
    descriptor expanded (tensor map, shape, strides), and expands a descriptor again only for an
    address it has not seen; the pointer kernel's relaunch calls the C function with its arguments."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    expanded = []

    def make_tensordesc_arg(arg, metadata):
        expanded.append(arg.base.data_ptr())
        return [("map", arg.base.data_ptr(), metadata), *arg.shape, *arg.strides]
    _as_36(monkeypatch, make_tensordesc_arg)
    c_launch = _CLaunch()
    calls = c_launch.calls
    x = torch.randn(32, 32)
    run = _launcher_36(c_launch, 3, ["meta-a", "meta-b", "meta-c"])
    compiled = fast_launch.Compiled(_Kernel36(run), (4,), ("M", "N"), [TensorDescriptor.from_tensor(x, [16, 16])] * 3)
    assert compiled.direct is c_launch
    a, b, c = (torch.randn(32, 32) for _ in range(3))
    for tensors in ((a, b, c), (a, b, c), (b, a, c)):
        assert compiled((*tensors, "bias", "scale_a", "scale_b"), 7)
    # grid, stream, function, cooperative, pdl, two scratch buffers, metadata, launch metadata, both hooks
    assert calls[0][:13] == (4, 1, 1, 7, "function", False, True, None, None, "metadata", None, None, None)
    maps = [("map", t.data_ptr(), m) for t, m in zip((a, b, c), ("meta-a", "meta-b", "meta-c"))]
    assert calls[0][13:] == (maps[0], 32, 32, 32, 1, maps[1], 32, 32, 32, 1, maps[2], 32, 32, 32, 1,
                             "bias", "scale_a", "scale_b", "M", "N")
    assert calls[1] == calls[0]
    assert calls[2][13] == ("map", b.data_ptr(), "meta-a") and calls[2][18] == ("map", a.data_ptr(), "meta-b")
    # the second call expanded nothing; the third only what changed address (a's and b's descriptors)
    assert expanded == [a.data_ptr(), b.data_ptr(), c.data_ptr(), b.data_ptr(), a.data_ptr()]
    assert not run.calls  # around Triton's launcher
    monkeypatch.setattr(fast_launch, "MAPS_PER_DESCRIPTOR", 2)  # past the bound the oldest address goes
    d = torch.randn(32, 32)
    compiled((d, b, c, None, None, None), 7)
    assert list(compiled.maps[0]) == [b.data_ptr(), d.data_ptr()] and len(compiled.maps[2]) == 1

    pointer = fast_launch.Compiled(_Kernel36(_launcher_36(c_launch)), (5, 2), ("K",))
    assert pointer((a, b, c, None, None, None), 3)
    assert calls[-1] == (5, 2, 1, 3, "function", False, True, None, None, "metadata", None, None, None,
                         a, b, c, None, None, None, "K")


def test_direct_launch_only_under_the_layout_it_was_read_from(monkeypatch):
    """Another launcher layout (this machine's Triton), scratch memory, descriptors that are not the
    first arguments, or a launch hook: Triton's own launcher runs."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    desc = TensorDescriptor.from_tensor(torch.randn(32, 32), [16, 16])
    c_launch = _CLaunch()
    _as_36(monkeypatch, lambda arg, metadata: [])
    assert fast_launch.unwrapped(_launcher_36(c_launch, 3, [{}, {}, {}]), 3) is not None

    class Later(type(_launcher_36(c_launch))):  # the launcher's call as Triton 3.7-3.9 spell it, on 3.6's driver
        def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,
                     launch_enter_hook, launch_exit_hook, *args):
            pass
    assert fast_launch.unwrapped(Later(), 0) is None
    _as_36(monkeypatch, lambda arg, metadata, _: [])  # 3.8's make_tensordesc_arg
    assert fast_launch.unwrapped(_launcher_36(c_launch, 3, [{}, {}, {}]), 3) is None
    _as_36(monkeypatch, lambda arg, metadata: [])
    assert fast_launch.unwrapped(_launcher_36(c_launch, 3, [{}, None, {}]), 3) is None  # a descriptor not lowered to TMA
    assert fast_launch.unwrapped(_launcher_36(c_launch, 3, [{}, {}, {}]), 2) is None
    scratch = _launcher_36(c_launch)
    scratch.global_scratch_size = 128
    assert fast_launch.unwrapped(scratch, 0) is None

    class Hooked:
        def __init__(self):
            self.seen = []

        def __call__(self, *args):
            self.seen.append(args)
    hook = Hooked()
    monkeypatch.setattr(triton.knobs.runtime, "launch_enter_hook", hook)
    kernel = _Kernel36(_launcher_36(c_launch))
    kernel.launch_metadata = lambda *args: "launch metadata"
    assert fast_launch.Compiled(kernel, (4,), ("M",), [desc] * 3).direct is None  # descriptors it does not expand
    pointer = fast_launch.Compiled(kernel, (4,), ("M",))
    assert pointer.direct is c_launch
    assert pointer((1, 2, 3), 0) and not c_launch.calls  # a hook to call: through Triton's launcher
    assert kernel.run.calls[-1][5:8] == ("metadata", "launch metadata", hook)


# A TMA kernel's signature: its three descriptors first, as tritonmm's TMA kernel takes them.
_SIGNATURE = {"a": "tensordesc<fp16[16, 16]>", "b": "tensordesc<fp16[16, 16]>", "c": "tensordesc<fp16[16, 16]>",
              "bias": "*fp16", "scale_a": "*fp32", "scale_b": "*fp32", "M": "i32", "N": "constexpr"}


def _driver_expand(arg, metadata):
    from triton.backends.nvidia import driver
    return driver.make_tensordesc_arg(arg, metadata)


def _launcher_37(c_launch, expand, descriptors=0, meta=None, cells=38, signature=_SIGNATURE):
    """A launcher laid out as Triton 3.7-3.9's CudaLauncher. Its expander for a TMA kernel is Triton 3.8's own
    (wrap_handle_tensordesc_impl, where this machine's Triton has it) for ``cells`` 38, or one over 3.7's cells."""
    import triton.backends.driver

    def wrap_37(launcher, tensordesc_indices, tensordesc_meta):
        def inner(*args):  # over 3.7's cells: its make_tensordesc_arg is the driver module's
            final = []
            for i, arg in enumerate(args[-1]):
                final.extend(_driver_expand(arg, tensordesc_meta[i]) if i in tensordesc_indices else [arg])
            return launcher(*args[:-1], final)
        return inner

    class CudaLauncher:
        global_scratch_size = profile_scratch_size = 0
        gsan_enabled = False
        launch_cooperative_grid, launch_pdl = False, True
        arg_annotations, kernel_signature = "annotations", b"signature"
        calls = []  # what Triton's own launcher was handed

        def __init__(self):
            self.launch = c_launch if not descriptors else \
                triton.backends.driver.wrap_handle_tensordesc_impl(c_launch, signature, meta, expand) if cells == 38 else \
                wrap_37(c_launch, set(range(descriptors)), meta)

        def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata, launch_enter_hook,
                     launch_exit_hook, *args):
            self.calls.append((gridX, gridY, gridZ, stream, function, *args))
    return CudaLauncher()


def _as_37(monkeypatch, cells=38):
    """The driver module as Triton 3.7-3.9 lay it out, whichever this machine's Triton is."""
    from triton.backends import driver as base
    from triton.backends.nvidia import driver
    if cells == 38 and not hasattr(base, "wrap_handle_tensordesc_impl"):
        pytest.skip("this machine's Triton has no 3.8 expander to hand the launch function")
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    monkeypatch.delattr(driver, "_BASE_ARGS_FORMAT", raising=False)
    for name in ("annotate_arguments", "make_kernel_signature"):
        monkeypatch.setattr(driver, name, getattr(driver, name, lambda signature: None), raising=False)
    monkeypatch.setattr(driver, "CudaLauncher", type(_launcher_37(None, None)))


@pytest.mark.parametrize("cells", [37, 38], ids=["3.7", "3.8-3.9"])
def test_direct_launch_under_a_37_launcher_hands_the_c_function_what_triton_would(cells, monkeypatch):
    """Under Triton 3.7-3.9's launcher layout a relaunch calls the C launch function with its 3.7-3.9 arguments:
    one sequence of every argument, each descriptor expanded in place, the same sequence Triton's own expander
    builds; each descriptor is expanded again only for an address it has not seen."""
    from triton.backends.nvidia import driver
    from triton.tools.tensor_descriptor import TensorDescriptor
    _as_37(monkeypatch, cells)
    expanded = []

    def make_tensordesc_arg(arg, metadata, _=None):
        expanded.append(arg.base.data_ptr())
        return [("map", arg.base.data_ptr(), metadata), *arg.shape, *arg.strides]
    if cells == 37:
        monkeypatch.setattr(driver, "make_tensordesc_arg", lambda arg, metadata: make_tensordesc_arg(arg, metadata))
    assert fast_launch.direct_layout()
    c_launch = _CLaunch()
    calls = c_launch.calls
    x = torch.randn(32, 32)
    meta = ["meta-a", "meta-b", "meta-c"]
    run = _launcher_37(c_launch, make_tensordesc_arg, 3, meta, cells)
    compiled = fast_launch.Compiled(_Kernel36(run), (4,), ("M", "N"), [TensorDescriptor.from_tensor(x, [16, 16])] * 3)
    assert compiled.direct is c_launch and compiled.tail == ("annotations", b"signature")
    a, b, c = (torch.randn(32, 32) for _ in range(3))
    for tensors in ((a, b, c), (a, b, c), (b, a, c)):
        assert compiled((*tensors, "bias", "scale_a", "scale_b"), 7)
    # grid, stream, function, cooperative, pdl, metadata, launch metadata, both hooks, two scratch buffers
    head = (4, 1, 1, 7, "function", False, True, "metadata", None, None, None, None, None, "annotations", b"signature")
    maps = [("map", t.data_ptr(), m) for t, m in zip((a, b, c), meta)]
    assert calls[0] == (*head, (maps[0], 32, 32, 32, 1, maps[1], 32, 32, 32, 1, maps[2], 32, 32, 32, 1,
                                "bias", "scale_a", "scale_b", "M", "N"))
    assert calls[1] == calls[0] and calls[2][-1][0] == ("map", b.data_ptr(), "meta-a")
    assert expanded == [a.data_ptr(), b.data_ptr(), c.data_ptr(), b.data_ptr(), a.data_ptr()]
    assert not run.calls  # around Triton's launcher
    descriptors = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (b, a, c)]
    run.launch(*head, (*descriptors, "bias", "scale_a", "scale_b", "M", "N"))  # Triton's own expander
    assert calls[-1][:-1] == head and tuple(calls[-1][-1]) == calls[2][-1]

    pointer = fast_launch.Compiled(_Kernel36(_launcher_37(c_launch, make_tensordesc_arg)), (5, 2), ("K",))
    assert pointer((a, b, c, None, None, None), 3)
    assert calls[-1] == (5, 2, 1, 3, *head[4:], (a, b, c, None, None, None, "K"))


def test_direct_launch_under_a_37_launcher_only_where_it_is_laid_out_so(monkeypatch):
    """Descriptors that are not the first arguments, one not lowered to a tensor map, scratch memory, GSan's
    instrumentation, a 3.6 driver module beneath: Triton's own launcher runs."""
    _as_37(monkeypatch)
    c_launch = _CLaunch()
    expand = lambda arg, metadata, _: []  # noqa: E731
    assert fast_launch.unwrapped(_launcher_37(c_launch, expand, 3, [{}, {}, {}]), 3) is not None
    after = _launcher_37(c_launch, expand, 3, [{}, {}, {}], signature={"x": "*fp16", **_SIGNATURE})
    assert fast_launch.unwrapped(after, 3) is None
    assert fast_launch.unwrapped(_launcher_37(c_launch, expand, 3, [{}, None, {}]), 3) is None
    for attribute, value in (("gsan_enabled", True), ("profile_scratch_size", 64)):
        run = _launcher_37(c_launch, expand)
        setattr(run, attribute, value)
        assert fast_launch.unwrapped(run, 0) is None
    _as_36(monkeypatch, lambda arg, metadata: [])
    assert fast_launch.unwrapped(_launcher_37(c_launch, expand), 0) is None


def _this_tritons_launcher(monkeypatch, c_launch, descriptors: bool, expanded: list):
    """A CudaLauncher of this machine's Triton (whichever version: its own class, __call__ and descriptor expander),
    its attributes set as a compiled kernel's would be, over the stand-in C function; make_tensordesc_arg replaced
    by one with the same parameters that records what it expands (the real one encodes on a GPU)."""
    from triton.backends.nvidia import driver
    params = list(inspect.signature(driver.make_tensordesc_arg).parameters)

    def expand(arg, metadata, *_):
        expanded.append(arg.base.data_ptr())
        return [("map", arg.base.data_ptr(), metadata), *arg.shape, *arg.strides]
    fake = expand if len(params) != 2 else lambda arg, metadata: expand(arg, metadata)
    fake.__signature__ = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                            for p in params])
    monkeypatch.setattr(driver, "make_tensordesc_arg", fake)
    monkeypatch.setattr(triton.runtime.driver, "_active", object())  # 3.8-3.9's __call__ reads it (no GPU here)
    run = object.__new__(driver.CudaLauncher)
    run.launch = driver.wrap_handle_tensordesc(c_launch, _SIGNATURE if descriptors else {"x": "*fp16", "K": "i32"},
                                               ["meta-a", "meta-b", "meta-c"] if descriptors else None)
    run.num_ctas, run.gsan_enabled = 1, False
    run.global_scratch_size = run.profile_scratch_size = 0
    run.global_scratch_align = run.profile_scratch_align = 1
    run.launch_cooperative_grid, run.launch_pdl = False, True
    run.arg_annotations, run.kernel_signature = "annotations", b"signature"  # read by 3.7-3.9's only
    return run


@pytest.mark.parametrize("descriptors", [True, False], ids=["tma", "pointer"])
def test_direct_launch_hands_the_c_function_what_this_tritons_launcher_does(descriptors, monkeypatch):
    """On this machine's Triton (3.8 in CI; 3.6 and 3.8 on the GPU machine), with its own launcher class and
    expander: a direct relaunch hands the C launch function what Triton's launcher hands it for the same call,
    and a second call at the same addresses encodes no tensor map again."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    assert fast_launch.direct_layout()
    c_launch, expanded = _CLaunch(), []
    run = _this_tritons_launcher(monkeypatch, c_launch, descriptors, expanded)
    x = torch.randn(32, 32)
    a, b, c = (torch.randn(32, 32) for _ in range(3))
    if descriptors:
        compiled = fast_launch.Compiled(_Kernel36(run), (4,), ("M", "N"), [TensorDescriptor.from_tensor(x, [16, 16])] * 3)
        given, own = (a, b, c, "bias", "scale_a", "scale_b"), \
            (*(TensorDescriptor.from_tensor(t, [16, 16]) for t in (a, b, c)), "bias", "scale_a", "scale_b", "M", "N")
    else:
        compiled = fast_launch.Compiled(_Kernel36(run), (4, 2), (7,))
        given, own = (a,), (a, 7)
    assert compiled.direct is c_launch
    assert compiled(given, 5) and compiled(given, 5)
    run(*compiled.grid, 5, "function", "metadata", None, None, None, *own)  # JITFunction.run's call of the launcher

    def flat(call):  # 3.7-3.9 hand the arguments as one sequence, a list from Triton's expander
        return call[:-1] + (tuple(call[-1]),) if isinstance(call[-1], (list, tuple)) else call
    direct, _, triton_own = c_launch.calls
    assert flat(direct) == flat(triton_own) and direct == c_launch.calls[1]
    assert expanded == ([a.data_ptr(), b.data_ptr(), c.data_ptr()] * 2 if descriptors else [])


def test_a_refused_direct_call_falls_back_for_good(monkeypatch):
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    compiled = fast_launch.Compiled(_Refusing(), (4,), (1, 2))
    assert compiled((None,), 0) is False
    assert not fast_launch.enabled()


@pytest.mark.gpu
@pytest.mark.parametrize("fast", [True, False], ids=["direct", "kernel[grid]"])
def test_gpu_repeated_products_relaunch(fast, path, monkeypatch):
    """The second call of a key launches the compiled kernel directly (no new plan); results are
    right for every call, on fresh inputs, and with the direct launch off, on both kernel paths
    (a TMA relaunch re-points the first launch's descriptors at the new tensors)."""
    monkeypatch.setitem(fast_launch._state, "enabled", fast)
    plans = []
    real = product.Product.__init__
    monkeypatch.setattr(product.Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    shapes = [(100, 72, 56), (1, 4096, 64), (64, 1, 32)]  # sizes of 1 are specialized by Triton
    for dtype in (torch.bfloat16, torch.float32):
        for shape in shapes:
            for _ in range(3):
                a, b = operands(*shape, dtype, "NT", "cuda")
                out = torch.full(shape[:2], float("nan"), dtype=dtype, device="cuda")
                tritonmm.mm(a, b, out=out, input_precision="ieee" if dtype == torch.float32 else None)
                assert rel_err(out, a, b) < (1e-2 if dtype == torch.bfloat16 else 1e-5)
    assert fast_launch.enabled() == fast
    assert len(plans) == (2 if fast else 6) * len(shapes)
    if fast and fast_launch.direct_layout():  # a launcher layout the direct call was read from (3.6-3.9)
        assert all(launch.direct is not None for entry in relaunch._entries.values() for launch in entry.launches)


@pytest.mark.gpu
def test_gpu_tensor_maps_follow_recycled_and_many_addresses(path, monkeypatch):
    """Relaunches on operands at addresses seen before (the allocator recycles them) with new values,
    and on more addresses than a descriptor keeps tensor maps for (the bound lowered to 4): every
    result right; on Triton 3.6-3.9's launchers the TMA relaunches are direct and their maps at the bound."""
    monkeypatch.setattr(fast_launch, "MAPS_PER_DESCRIPTOR", 4)
    shape = (136, 72, 40)  # partial tiles in M, N and K; 16-byte aligned rows (the TMA path takes it)
    kept = []
    for i in range(12):
        a, b = operands(*shape, torch.float16, "NN", "cuda")
        if i % 2:
            kept.append((a, b))  # held: new addresses; the others' memory is recycled
        out = torch.full(shape[:2], float("nan"), dtype=torch.float16, device="cuda")
        tritonmm.mm(a, b, out=out)
        assert rel_err(out, a, b) < 2e-3
    assert planner.chosen(a, b, "native")[1] == path
    if path == "tma" and fast_launch.direct_layout():
        # served where native.cpp was asked first (ops._repeated): keyed apart (relaunch.key)
        launch = relaunch._entries[relaunch.key(a, b, out, None, "none", "native",
                                                served=native.serves(a.dtype))].launches[0]
        assert launch.direct is not None and len(launch.maps[0]) == len(launch.maps[1]) == 4


@pytest.mark.gpu
def test_gpu_relaunch_with_bias_activation_and_batches():
    x, w, bias = torch.randn(37, 48, device="cuda"), torch.randn(24, 48, device="cuda"), torch.randn(24, device="cuda")
    ref = torch.nn.functional.silu(torch.nn.functional.linear(x.double(), w.double(), bias.double()))
    for _ in range(3):
        y = tritonmm.linear(x, w, bias, "silu", input_precision="ieee")
        assert ((y.double() - ref).norm() / ref.norm()) < 1e-5
    for _ in range(3):
        a, b = torch.randn(5, 19, 23, device="cuda"), torch.randn(1, 23, 7, device="cuda")
        out = tritonmm.matmul(a, b, input_precision="ieee")
        assert torch.allclose(out, a @ b, atol=1e-4)


def test_cached_descriptors_keep_no_tensor_alive():
    """A TMA entry keeps its descriptors' shapes, strides and blocks, not the first call's tensors."""
    import weakref

    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.randn(32, 32)
    compiled = fast_launch.Compiled(_Refusing(), (1,), (), descriptors=[TensorDescriptor.from_tensor(x, [16, 16])])
    alive = weakref.ref(x)
    del x
    assert alive() is None and all(d.base is None for d in compiled.descriptors)
