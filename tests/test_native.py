"""native.cpp: aten::mm's, addmm's and bmm's CUDA kernels in C++ under use_tritonmm(), and tritonmm.linear's, mm's
and matmul's fast path, repeating earlier calls' launches.

Without a GPU: the extension compiles (CUDA's headers needed, no GPU), registers and unregisters its kernels.
On the GPU: every result against float64 on first (Python) and repeated (C++) calls, over the pointer
kernel, split-K's two launches, the one-row kernel, the TMA kernel (whole and in a wave-tail split), the Gluon
kernel and staged products with their copies, with and without a bias, through aten and through tritonmm.linear;
batches (bmm's) on the pointer and TMA kernels, a broadcast operand too, apart from matrices' entries;
what it leaves to Python (float32, capture, beta) stays correct; the thresholds' overrides and disable() forget or
remove it. Without a GPU too: which calls the entry points plan as ones C++ will repeat (design.md: native-staging).
"""
from unittest import mock

import pytest
import torch
import triton

import tritonmm
from tritonmm import fast_launch, native, relaunch, thresholds, tuning

from conftest import HAS_GPU

BOUND = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 2e-3}


@pytest.fixture(scope="module")
def module():
    if native.cuda_include() is None:
        pytest.skip("no CUDA headers under torch's CUDA_HOME (set CUDA_HOME)")
    return native.build()


@pytest.fixture
def repeating(module, monkeypatch):
    """use_tritonmm() with native.cpp installed for aten::mm (where Triton's launcher has a layout direct launches
    know)."""
    if not fast_launch.direct_layout():
        pytest.skip("launches are described as Triton 3.6-3.9's launchers make them")
    monkeypatch.setenv("TRITONMM_NATIVE", "auto")
    monkeypatch.setitem(native._state, "module", module)
    tritonmm.disable()
    with tritonmm.use_tritonmm():
        assert native._state["installed"], "enable() did not install native.cpp's kernels"
        yield
    assert not native._state["installed"]


def dispatch_table() -> str:
    return torch._C._dispatch_dump("aten::mm")


@pytest.mark.nvcc
def test_compiles_registers_and_unregisters(module):
    """Installing puts native.cpp's kernel in aten::mm's CUDA slot, uninstalling gives the slot back; a kernel
    registered twice is refused."""
    tables = lambda: tuple(torch._C._dispatch_dump(f"aten::{op}") for op in ("mm", "addmm", "bmm"))  # noqa: E731
    before = tables()
    assert not any("native.cpp" in t for t in before)
    kernels = (lambda *args: None,) * 3
    module.install(*kernels)
    try:
        assert all("native.cpp" in t for t in tables())
        with pytest.raises(RuntimeError, match="already installed"):
            module.install(*kernels)
    finally:
        module.uninstall()
    assert tables() == before


def test_mode_names_its_values(monkeypatch):
    monkeypatch.setenv("TRITONMM_NATIVE", "yes")
    with pytest.raises(ValueError, match="TRITONMM_NATIVE must be auto, 0 or 1"):
        native.mode()
    monkeypatch.setenv("TRITONMM_NATIVE", "0")
    monkeypatch.setitem(native._state, "module", object())  # even where a build is loaded
    assert native.module() is None


def nan_backed(shape, dtype):
    """Frees a NaN-filled block of the result's size first, so that a result the kernel leaves unwritten shows."""
    torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    torch.cuda.synchronize()


def check(a, b, bias=None, linear=False):
    """torch.mm (torch.addmm with a bias), or tritonmm.linear of a and b.T, against float64."""
    ref = a.double() @ b.double() + (0 if bias is None else bias.double())
    nan_backed(ref.shape, a.dtype)
    if linear:
        out = tritonmm.linear(a, b.T, bias)
    else:
        out = torch.mm(a, b) if bias is None else torch.addmm(bias, a, b)
    assert out.shape == ref.shape and out.dtype == a.dtype
    err = ((out.double() - ref).norm() / ref.norm()).item()
    assert err < BOUND[a.dtype], err


# (M, N, K, A transposed): decode rows against weights read as W.T (split-K and whole tiles), one row (the
# one-row kernel), odd sizes, a column-major A.
SHAPES = [(8, 4096, 4096, False), (8, 1024, 4096, False), (8, 14336, 4096, False), (1, 4096, 4096, False),
          (5, 1000, 4104, False), (37, 2049, 777, False), (64, 512, 1536, True)]


# The bias each call passes: addmm's broadcasts (N,), (1, N), (M, 1) or is (M, N); linear's is (N,).
BIASES = {"mm": None, "addmm": lambda M, N: (N,), "addmm (1,N)": lambda M, N: (1, N),
          "addmm (M,1)": lambda M, N: (M, 1), "addmm (M,N)": lambda M, N: (M, N), "linear": None,
          "linear+bias": lambda M, N: (N,)}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("M,N,K,a_t", SHAPES)
@pytest.mark.parametrize("call", list(BIASES))
def test_gpu_repeated_products_match_float64(repeating, M, N, K, a_t, dtype, call):
    def operands():
        a = (torch.randn(K, M, device="cuda").T if a_t else torch.randn(M, K, device="cuda")).to(dtype)
        w = (torch.randn(N, K, device="cuda") / K ** 0.5).to(dtype)
        bias = None if BIASES[call] is None else torch.randn(BIASES[call](M, N), device="cuda").to(dtype)
        return a, w.T, bias
    hits, misses, _, repeated = native.stats()
    check(*operands(), linear=call.startswith("linear"))  # first: Python plans it, and describes its launches
    assert native.stats()[1] > misses and native.stats()[3] == repeated + 1
    for _ in range(3):  # then repeated from C++, with fresh operands at other addresses
        check(*operands(), linear=call.startswith("linear"))
    assert native.stats()[0] == hits + 3


@pytest.mark.gpu
@pytest.mark.parametrize("x_shape,view", [((8, 1, 4096), None), ((2, 3, 5, 4096), None), ((4096,), None),
                                          ((3, 7, 4096), "permuted"), ((6, 4096), "parameter")])
def test_gpu_linear_of_any_leading_dims_repeats_from_cpp(repeating, x_shape, view):
    """tritonmm.linear's x of any leading dims is flattened and its result shaped in C++ on a repeat: a view of x
    where one exists, a copy where none does (a permuted x); a Parameter x too. Each call's result against
    float64, the same shape as F.linear's."""
    w = (torch.randn(1000, 4096, device="cuda") / 64).bfloat16()
    bias = torch.randn(1000, device="cuda").bfloat16()

    def x_of():
        if view == "permuted":  # (7, 3, 4096) seen as (3, 7, 4096): no flat view of its leading dims
            return torch.randn(7, 3, 4096, device="cuda").bfloat16().transpose(0, 1)
        x = torch.randn(x_shape, device="cuda").bfloat16()
        return torch.nn.Parameter(x) if view == "parameter" else x
    hits, repeated = native.stats()[0], native.stats()[3]
    for _ in range(4):  # the first plans it in Python; the rest repeat from C++
        x = x_of()
        ref = torch.nn.functional.linear(x.double(), w.double(), bias.double())
        nan_backed(ref.shape, x.dtype)
        with torch.no_grad():
            out = tritonmm.linear(x, w, bias)
        assert out.shape == ref.shape and out.dtype == x.dtype
        assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[x.dtype]
    assert native.stats()[0] == hits + 3 and native.stats()[3] == repeated + 1


@pytest.mark.gpu
@pytest.mark.parametrize("fn", ["mm", "matmul"])
@pytest.mark.parametrize("M,N,K,b_t,b_param", [(8, 1000, 4096, True, True), (37, 2049, 777, False, False),
                                               (300, 520, 1032, True, False)])
def test_gpu_mm_and_matmul_repeat_from_cpp(repeating, fn, M, N, K, b_t, b_param):
    """tritonmm.mm and matmul of 2-D operands (B as given or a transposed view, a Parameter or not) repeat from C++
    after their first call, each result against float64, into out= too; with a precision named they stay in
    Python (C++ keys none) and stay correct."""
    op = getattr(tritonmm, fn)
    w = torch.randn(N, K, device="cuda").bfloat16() / K ** 0.5
    b = w.T if b_t else w.T.contiguous()
    if b_param:
        b = torch.nn.Parameter(b, requires_grad=False)
    hits, repeated = native.stats()[0], native.stats()[3]
    for _ in range(4):  # the first plans it in Python; the rest repeat from C++, fresh A at other addresses
        a = torch.randn(M, K, device="cuda").bfloat16()
        ref = a.double() @ b.double()
        nan_backed(ref.shape, a.dtype)
        out = op(a, b)
        assert out.shape == ref.shape and ((out.double() - ref).norm() / ref.norm()).item() < BOUND[a.dtype]
    assert native.stats()[0] == hits + 3 and native.stats()[3] == repeated + 1
    into = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    with mock.patch.object(relaunch, "lookup", side_effect=AssertionError("Python's launch cache was asked")):
        assert op(a, b, out=into) is into  # from C++, into out
    assert ((into.double() - ref).norm() / ref.norm()).item() < BOUND[a.dtype]
    stats = native.stats()
    c = op(a, b, input_precision="ieee")
    assert ((c.double() - ref).norm() / ref.norm()).item() < BOUND[a.dtype]
    assert native.stats()[:2] == stats[:2]  # not asked C++


def _rel(c, ref) -> float:
    return ((c.double() - ref).norm() / ref.norm()).item()


@pytest.mark.gpu
@pytest.mark.parametrize("fn", ["mm", "matmul"])
@pytest.mark.parametrize("M,N,K", [(8, 1000, 4096), (37, 2056, 777)])
def test_gpu_out_repeats_from_cpp_where_it_may(repeating, fn, M, N, K):
    """out= from the first call: the product is planned in Python into out and remembered, then repeated from C++
    into each NaN-filled out, every result against float64. C++ leaves to Python (repeat_mm's False; Python stays
    correct, or refuses as torch does) an out of other strides, one not 16-byte aligned, one sharing bytes with an
    operand (through its storage or another), and one where a gradient is asked for (by an input or by out: out=
    records none), refused even after the product was repeated."""
    op = getattr(tritonmm, fn)
    b = (torch.randn(N, K, device="cuda").bfloat16() / K ** 0.5).T
    repeated = native.stats()[3]
    for i in range(3):
        a = torch.randn(M, K, device="cuda").bfloat16()
        ref, into = a.double() @ b.double(), torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        if i:
            version = into._version
            with mock.patch.object(relaunch, "lookup", side_effect=AssertionError("Python's launch cache was asked")):
                assert op(a, b, out=into) is into
            assert into._version > version  # C++ tells autograd, as torch's out= kernels do
        else:
            assert op(a, b, out=into) is into
        assert _rel(into, ref) < BOUND[a.dtype]
    assert native.stats()[3] == repeated + 1
    column_major = torch.full((N, M), float("nan"), device="cuda", dtype=torch.bfloat16).T
    offset = torch.full((M * N + 1,), float("nan"), device="cuda", dtype=torch.bfloat16)[1:].view(M, N)
    for out in (column_major, offset):
        assert native.repeat_mm(a, b, out) is False  # C++ leaves it to Python
        assert op(a, b, out=out) is out and _rel(out, ref) < BOUND[a.dtype]
    # a and out views of one buffer, a as known; then out over the same bytes through a second storage (DLPack's)
    shared = torch.randn(M * max(K, N), device="cuda").bfloat16()
    a_shared, out_shared = shared[:M * K].view(M, K), shared[:M * N].view(M, N)
    alias = torch.from_dlpack(shared)[:M * N].view(M, N)
    assert alias.untyped_storage()._cdata != shared.untyped_storage()._cdata
    for out in (out_shared, alias):
        assert native.repeat_mm(a_shared, b, out) is False
        with pytest.raises(ValueError, match="out overlaps input a"):
            op(a_shared, b, out=out)
    grad_a = a.clone().requires_grad_()
    with torch.no_grad():
        assert _rel(op(grad_a, b, out=into), ref) < BOUND[a.dtype]  # no gradient asked: repeated
    assert native.repeat_mm(grad_a, b, into) is False
    with pytest.raises(ValueError, match="out= does not record a gradient"):
        op(grad_a, b, out=into)
    grad_out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16).requires_grad_()
    assert native.repeat_mm(a, b, grad_out) is False
    with pytest.raises(ValueError, match="out= does not record a gradient"):
        op(a, b, out=grad_out)


@pytest.mark.gpu
def test_gpu_a_row_into_a_wider_out_leaves_no_odd_layout_behind(repeating):
    """One row into an out of strides (2N, 1), which is_contiguous() passes: C++ must not learn that layout, so
    later calls without out= (from C++) get torch's (N, 1), and every result is right."""
    N, K = 1000, 4096
    a, b = torch.randn(1, K, device="cuda").bfloat16(), torch.randn(K, N, device="cuda").bfloat16() / K ** 0.5
    ref = a.double() @ b.double()
    wide = torch.full((1, 2 * N), float("nan"), device="cuda", dtype=torch.bfloat16)[:, :N]
    assert wide.is_contiguous() and wide.stride() == (2 * N, 1)
    assert tritonmm.mm(a, b, out=wide) is wide and _rel(wide, ref) < BOUND[a.dtype]
    repeated = native.stats()[3]
    for _ in range(2):  # planned in Python and remembered, then repeated from C++
        c = tritonmm.mm(a, b)
        assert c.stride() == (N, 1) and _rel(c, ref) < BOUND[a.dtype]
    assert native.stats()[3] == repeated + 1


@pytest.mark.gpu
def test_gpu_decode_products_repeat_from_cpp(repeating):
    """The products of an eager decode step (the pointer kernel, whole or split) are repeated from C++."""
    for N in (4096, 1024):
        a, w = torch.randn(8, 4096, device="cuda").bfloat16(), torch.randn(N, 4096, device="cuda").bfloat16()
        torch.nn.functional.linear(a, w)
    assert native.stats()[3] == 2


def _tail_product():
    """Operands of a product the planner runs on the TMA kernel in a wave-tail split (two launches over row slices),
    from a few candidates (the split is a property of the SM count)."""
    from tritonmm import config_space, planner
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for M, N, K in ((3072, 768, 4160), (128 * (sms + 12), 128, 2048), (128 * (sms + 8), 256, 4096)):
        a, b = torch.randn(K, M, device="cuda").bfloat16().T, torch.randn(K, N, device="cuda").bfloat16() / K ** 0.5
        cfg, path = planner.chosen(a, b, "native")
        if path == "tma" and config_space.tail(cfg):
            return lambda: (torch.randn(K, M, device="cuda").bfloat16().T, b)
    pytest.fail("no candidate runs a wave-tail split on the TMA kernel")


def _repeats_from_cpp(operands, may_decline: bool):
    """Four products of fresh operands() (other addresses each call), NaN-backed against float64: the first plans it in
    Python and describes it, the rest repeat from C++; then one into a NaN-filled out=, Python's launch cache not asked.
    Where describe declines its launches (``may_decline``: on Triton 3.6 its tensor descriptors, design.md:
    native-tma), C++ must have left it to Python, and it stays right. Returns its relaunch entry."""
    hits, repeated = native.stats()[0], native.stats()[3]
    for _ in range(4):
        a, b = operands()
        ref = a.double() @ b.double()
        nan_backed(ref.shape, a.dtype)
        out = tritonmm.mm(a, b)
        assert _rel(out, ref) < BOUND[a.dtype]
    entry = relaunch.cached(relaunch.key(a, b, None, None, "none", "native", served=True))  # as C++ was told it
    assert entry is not None
    if native.describe(entry) is None:
        assert may_decline and tuple(map(int, triton.__version__.split(".")[:2])) < (3, 8), "describe declined it"
        assert native.stats()[3] == repeated
        return entry
    assert native.stats()[0] == hits + 3 and native.stats()[3] == repeated + 1
    a, b = operands()
    ref, into = a.double() @ b.double(), torch.full(out.shape, float("nan"), device="cuda", dtype=a.dtype)
    with mock.patch.object(relaunch, "lookup", side_effect=AssertionError("Python's launch cache was asked")):
        assert tritonmm.mm(a, b, out=into) is into
    assert _rel(into, ref) < BOUND[a.dtype]
    return entry


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", ["tma", "tma NT", "tma small", "tma tail", "gluon"])
def test_gpu_tma_and_gluon_products_repeat_from_cpp(repeating, monkeypatch, kernel):
    """The TMA kernel (C stored through its descriptor or through pointers, a wave-tail split's two launches over row
    slices, a B of 64 KiB: a map under 128 KiB, which the driver workaround in encode() changes) and the Gluon kernel
    repeat from C++ after their first call: the tensor maps encoded there over each call's operands, fresh ones at other
    addresses each call, every result NaN-backed against float64, into out= too."""
    inf = float("inf")
    if kernel == "gluon":
        from tritonmm.kernels import gluon_gemm
        ok, reason = gluon_gemm.available()
        if not ok:
            pytest.skip(reason)
        over = dict(gluon_min_macs=0, gluon_min_fill=0)
    else:
        over = dict(gluon_min_macs=inf, gluon_wide_min_macs=inf)
        if kernel == "tma small":
            over.update(tma_min_macs=0, few_tiles_per_sm=0)
    for name, value in over.items():
        monkeypatch.setitem(thresholds.OVERRIDES, name, value)
    if kernel == "tma tail":
        operands = _tail_product()
    else:
        # C's rows 3088 bytes apart: stored through its descriptor; 3086 (x @ W.T): through pointers. Gluon's rows
        # aligned: its clusters' class (rows 16 bytes past alignment) launches 2-CTA clusters, which C++ leaves be.
        M, N, K = {"tma": (1030, 1544, 2056), "tma NT": (1030, 1543, 2056), "tma small": (2056, 32, 1024),
                   "gluon": (1030, 1536, 2048)}[kernel]
        w = torch.randn(N, K, device="cuda").bfloat16() / K ** 0.5
        b = w.T if kernel == "tma NT" else w.T.contiguous()
        operands = lambda: (torch.randn(M, K, device="cuda").bfloat16(), b)  # noqa: E731
    from tritonmm import planner
    path = planner.chosen(*operands(), "native")[1]
    assert path == ("gluon" if kernel == "gluon" else "tma"), path
    _repeats_from_cpp(operands, may_decline=True)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["tma both", "tma a", "tma b", "tma tail", "pointer"])
def test_gpu_staged_products_repeat_from_cpp(repeating, monkeypatch, case):
    """Staged products (staged eagerly from any size) repeat from C++ after their first call, copies and all, into
    buffers C++ allocates: TMA's aligned copies of both operands in one launch, of A alone, of B alone, of A before a
    wave-tail split's two launches over row slices of the copy, and the pointer kernel's K-major copies, K zero-padded.
    Fresh operands each call (_repeats_from_cpp), B too: a stale copy in a reused buffer would pass."""
    from tritonmm import config_space, product
    inf = float("inf")
    over = dict(stage_eager_min_macs=0, stage_eager_native_min_macs=0, gluon_min_macs=inf, gluon_wide_min_macs=inf)
    if case == "pointer":  # staging for TMA never pays: the pointer kernel's K-major copies instead
        over.update(tma_min_macs=inf, stage_min_macs_per_byte=inf, stage_min_macs_per_byte_wide_reads=inf)
    else:
        over.update(tma_min_macs=0, few_tiles_per_sm=0)
    for name, value in over.items():
        monkeypatch.setitem(thresholds.OVERRIDES, name, value)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    # K odd: A's rows 2-byte aligned, copied; N 1543: B's too, 1536: B read as given. "tma b": A's rows 2064 bytes
    # apart, 16 but not 32 past alignment, left as they are (realign's bar: 1.1e10 multiply-adds, this is 1.6e9)
    M, N, K = {"tma both": (1030, 1543, 1031), "tma a": (1030, 1536, 1031), "tma b": (1030, 1543, 1032),
               "tma tail": (128 * (sms + 12), 128, 2049), "pointer": (1030, 1543, 1031)}[case]
    if case == "tma tail":  # the default config in a wave-tail split: a whole wave of 128x128 tiles, then 12
        tail = config_space.make_config(128, 128, 64, 5, 4, TAIL=1)
        monkeypatch.setattr(product.Product, "heuristic", lambda self: tail)
    operands = lambda: (torch.randn(M, K, device="cuda").bfloat16(),  # noqa: E731
                        torch.randn(K, N, device="cuda").bfloat16() / K ** 0.5)
    from tritonmm import planner
    cfg, path = planner.chosen(*operands(), "native")
    assert path == ("pointer" if case == "pointer" else "tma") + "+staged", path
    assert config_space.tail(cfg) == (case == "tma tail")
    entry = _repeats_from_cpp(operands, may_decline=case != "pointer")
    copied = [staged is not None for staged in entry.staged]
    assert copied == [case != "tma b", case in ("tma both", "tma b", "pointer")], copied
    assert [which for _, which in entry.copies] == ["ab" if all(copied) else "ab"[copied.index(True)]]


# Batches (Z, M, N, K, B as a transposed view, B broadcast): odd sizes on the pointer kernel, x @ W.T per entry on the
# TMA kernel (3-D tensor maps; Triton 3.6's descriptors are left to Python), one weight for every entry (stride 0).
BATCHES = {"pointer": (32, 255, 128, 255, False, False), "tma": (8, 256, 1024, 3072, True, False),
           "broadcast": (6, 200, 512, 1024, True, True)}


@pytest.mark.gpu
@pytest.mark.parametrize("case", list(BATCHES))
def test_gpu_batches_repeat_from_cpp(repeating, case):
    """torch.bmm under use_tritonmm() repeats from C++ after its first call, and tritonmm.matmul of the same facts
    takes the same entry, into out= too (Python's launch cache not asked); fresh operands at other addresses each
    call, NaN-backed, against float64. A batch's entry is never a matrix's: torch.mm of 3-D operands still raises
    aten's error, tritonmm.mm its own, and an entry's matrix product is a product of its own."""
    Z, M, N, K, b_t, shared = BATCHES[case]
    w = torch.randn(1 if shared else Z, N, K, device="cuda").bfloat16() / K ** 0.5
    b = w.transpose(1, 2) if b_t else w.transpose(1, 2).contiguous()
    if shared:
        b = b.expand(Z, K, N)
    operands = lambda: (torch.randn(Z, M, K, device="cuda").bfloat16(), b)  # noqa: E731
    from tritonmm import planner
    path = planner.chosen(*operands(), "native", served=True)[1]
    assert case != "tma" or path == "tma", path
    hits, repeated = native.stats()[0], native.stats()[3]
    for _ in range(4):  # the first plans it in Python and describes it; the rest repeat from C++
        a, b = operands()
        ref = a.double() @ b.double()
        nan_backed(ref.shape, a.dtype)
        out = torch.bmm(a, b)
        assert out.shape == ref.shape and _rel(out, ref) < BOUND[a.dtype]
    entry = relaunch.cached(relaunch.key(a, b, None, None, "none", "native", served=True))  # as C++ was told it
    assert entry is not None
    if native.describe(entry) is None:
        assert case == "tma" and tuple(map(int, triton.__version__.split(".")[:2])) < (3, 8), "describe declined it"
        return
    assert native.stats()[0] == hits + 3 and native.stats()[3] == repeated + 1
    a, b = operands()
    ref = a.double() @ b.double()
    into = torch.full(ref.shape, float("nan"), device="cuda", dtype=a.dtype)
    with mock.patch.object(relaunch, "lookup", side_effect=AssertionError("Python's launch cache was asked")):
        assert _rel(tritonmm.matmul(a, b), ref) < BOUND[a.dtype]
        assert tritonmm.matmul(a, b, out=into) is into
    assert _rel(into, ref) < BOUND[a.dtype] and native.stats()[0] == hits + 5
    with pytest.raises(RuntimeError):
        torch.mm(a, b)
    with pytest.raises(ValueError):
        tritonmm.mm(a, b)
    misses = native.stats()[1]
    assert _rel(torch.mm(a[0], b[0]), ref[0]) < BOUND[a.dtype]
    assert native.stats()[1] == misses + 1  # an entry's matrices: not the batch's key


@pytest.mark.gpu
def test_gpu_a_matmul_batch_tells_cpp_on_its_first_call(repeating):
    """A batch C++ has not seen, first through tritonmm.matmul (not aten's bmm): Python plans it and tells C++ how to
    repeat it (native.remember of 3-D operands), and the next call repeats from C++; an out= whose strides are not a
    packed batch's is left to Python, and stays right."""
    Z, M, N, K = 6, 96, 320, 200
    w = torch.randn(Z, K, N, device="cuda").bfloat16() / K ** 0.5
    hits, repeated = native.stats()[0], native.stats()[3]
    a = torch.randn(Z, M, K, device="cuda").bfloat16()
    ref = a.double() @ w.double()
    nan_backed(ref.shape, a.dtype)
    assert _rel(tritonmm.matmul(a, w), ref) < BOUND[a.dtype]
    assert native.stats()[3] == repeated + 1
    a = torch.randn(Z, M, K, device="cuda").bfloat16()
    ref = a.double() @ w.double()
    nan_backed(ref.shape, a.dtype)
    with mock.patch.object(relaunch, "lookup", side_effect=AssertionError("Python's launch cache was asked")):
        assert _rel(tritonmm.matmul(a, w), ref) < BOUND[a.dtype]
    assert native.stats()[0] == hits + 1
    strided = torch.full((M, Z, N), float("nan"), device="cuda", dtype=a.dtype).transpose(0, 1)
    assert native.repeat_mm(a, w, strided) is False
    assert tritonmm.matmul(a, w, out=strided) is strided and _rel(strided, ref) < BOUND[a.dtype]


@pytest.mark.gpu
def test_gpu_what_it_leaves_to_python_stays_correct(repeating):
    """float32, beta and alpha other than 1, and a captured product run through Python, correct."""
    f_a, f_b = torch.randn(33, 65, device="cuda"), torch.randn(65, 17, device="cuda")
    counts = native.stats()[:2]
    check(f_a, f_b)
    assert native.stats()[:2] == counts  # float32: not looked up
    a, b = torch.randn(8, 256, device="cuda").half(), torch.randn(256, 128, device="cuda").half()
    bias = torch.randn(128, device="cuda").half()
    for _ in range(2):  # beta and alpha other than 1: aten's (through Python), not looked up
        out = torch.addmm(bias, a, b, beta=0.5, alpha=2)
        ref = 0.5 * bias.double() + 2 * (a.double() @ b.double())
        assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]
    assert native.stats()[:2] == counts
    x, w = torch.randn(8, 4096, device="cuda").bfloat16(), torch.randn(4096, 4096, device="cuda").bfloat16()
    torch.mm(x, w.T)
    torch.mm(x, w.T)
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.mm(x, w.T)
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        out = torch.mm(x, w.T)
    x.copy_(torch.randn_like(x))
    graph.replay()
    torch.cuda.synchronize()
    ref = x.double() @ w.double().T
    assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.bfloat16]


@pytest.mark.gpu
def test_gpu_overrides_tuning_and_disable_forget_it(repeating):
    a, b = torch.randn(8, 4096, device="cuda").bfloat16(), torch.randn(4096, 4096, device="cuda").bfloat16()
    torch.mm(a, b)
    assert native.stats()[2] == 1
    with thresholds.override(few_tiles_per_sm=0):
        assert native.stats()[2] == 0  # planned again under the override
        check(a, b)
    assert native.stats()[2] == 0
    torch.mm(a, b)
    thresholds.OVERRIDES["few_tiles_per_sm"] = 0  # however the overrides change
    assert native.stats()[2] == 0
    del thresholds.OVERRIDES["few_tiles_per_sm"]
    torch.mm(a, b)
    tuning.forget()
    assert native.stats()[2] == 0
    tritonmm.disable()
    assert not native._state["installed"] and "native.cpp" not in torch._C._dispatch_dump("aten::mm")


def test_every_change_of_the_overrides_and_the_tuner_forgets(monkeypatch):
    """native.clear on each change of the thresholds' overrides (override(), setitem, del, pop, |=, clear)
    and of the tuner's memory (forget): repeated products' keys hold neither."""
    with mock.patch.object(native, "clear") as cleared:
        with thresholds.override(tma_min_macs=0):
            pass
        assert cleared.call_count >= 2
        for change in (lambda d: d.__setitem__("tma_min_macs", 1), lambda d: d.pop("tma_min_macs"),
                       lambda d: d.setdefault("tma_min_macs", 2), lambda d: d.__delitem__("tma_min_macs")):
            before = cleared.call_count
            change(thresholds.OVERRIDES)
            assert cleared.call_count == before + 1
        before = cleared.call_count
        thresholds.OVERRIDES |= {"tma_min_macs": 3}
        thresholds.OVERRIDES.clear()
        assert cleared.call_count == before + 2
        before = cleared.call_count
        tuning.forget()
        assert cleared.call_count == before + 1
    assert thresholds.key() is None


class _Kernel:
    """A compiled kernel as describe reads it: its source's signature, by argument name in order."""
    def __init__(self, signature):
        self.src = type("Src", (), {"signature": signature})()


def _compiled(signature, rest, **kw):
    fields = dict(direct=object(), maps=(), descriptors=None, tensors=None, metadata=(4, 1, 2048), flags=(False, True),
                  kernel=_Kernel(signature), rest=rest, function=0xabc, grid=(7, 1, 1))
    fields.update(kw)
    return type("Compiled", (), fields)()


def _entry(launches, workspace=None, **kw):
    fields = dict(launches=tuple(launches), workspace=workspace, stage=None, offsets=None,
                  out_layout=((8, 16), (16, 1)), staged=None, copies=None, swapped=False)
    fields.update(kw)
    return type("Entry", (), fields)()


def test_describe_lays_out_triton_36_arguments():
    """Constexprs (None tensors included) dropped, tensors as pointer sources in order, integers at their width,
    then two null scratch pointers; split-K's second launch reads the workspace and the bias."""
    sig = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "bias": "constexpr", "sa": "constexpr", "sb": "constexpr",
           "M": "i32", "N": "i32", "K": "i64", "BLOCK": "constexpr"}
    one = _compiled(sig, (8, 16, 2 ** 40, 64))
    shape, strides, workspace, (launch,), buffers = native.describe(_entry([one]))
    assert (shape, strides, workspace, buffers) == ([8, 16], [16, 1], [], [[], []])
    function, grid, threads, shared, pdl, params = launch
    assert (function, grid, threads, shared, pdl) == (0xabc, [7, 1, 1], 128, 2048, True)
    assert params == [(native.A, 8, 0), (native.B, 8, 0), (native.OUT, 8, 0), (native.VALUE, 4, 8),
                      (native.VALUE, 4, 16), (native.VALUE, 8, 2 ** 40), (native.NULL_POINTER, 8, 0),
                      (native.NULL_POINTER, 8, 0)]
    reduce_sig = {"ws": "*fp32", "c": "*bf16", "bias": "*bf16", "sa": "constexpr", "sb": "constexpr", "M": "i32"}
    second = _compiled(reduce_sig, (-1,))
    launches = native.describe(_entry([one, second], workspace=(4, 8, 16)))[3]
    p2 = launches[1][5]
    assert p2[:4] == [(native.WORKSPACE, 8, 0), (native.OUT, 8, 0), (native.BIAS, 8, 0), (native.VALUE, 4, 2 ** 32 - 1)]


def test_describe_launches_a_staged_products_copies_first():
    """A staged product's copies launch first (kernels/copy.py's x, y, lo, x2, y2: an operand alone is its own pair),
    into buffers native.cpp allocates with the staged ones' sizes and strides, which the product's launch then reads
    in place of the operands; an entry whose copies are not all cached is left to Python."""
    copy_sig = {"x": "*bf16", "y": "*bf16", "lo": "constexpr", "x2": "*bf16", "y2": "*bf16", "R": "i32",
                "BLOCK": "constexpr"}
    sig = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "bias": "constexpr", "sa": "constexpr", "sb": "constexpr",
           "M": "i32"}
    copy, one = _compiled(copy_sig, (5, 64)), _compiled(sig, (8,))
    a_only = dict(stage=(1, None), staged=(((8, 16), (64, 1)), None), copies=((copy, "a"),))
    *_, (copied, launched), buffers = native.describe(_entry([one], **a_only))
    assert buffers == [[[8, 16], [64, 1]], []]
    assert copied[5][:5] == [(native.A, 8, 0), (native.STAGED_A, 8, 0), (native.A, 8, 0), (native.STAGED_A, 8, 0),
                             (native.VALUE, 4, 5)]
    assert launched[5][:3] == [(native.STAGED_A, 8, 0), (native.B, 8, 0), (native.OUT, 8, 0)]
    both = dict(stage=(1, 2), staged=(((8, 16), (64, 1)), ((16, 8), (1, 64))), copies=((copy, "ab"),))
    *_, (copied, launched), buffers = native.describe(_entry([one], **both))
    assert buffers == [[[8, 16], [64, 1]], [[16, 8], [1, 64]]]
    assert copied[5][:4] == [(native.A, 8, 0), (native.STAGED_A, 8, 0), (native.B, 8, 0), (native.STAGED_B, 8, 0)]
    assert launched[5][:2] == [(native.STAGED_A, 8, 0), (native.STAGED_B, 8, 0)]
    assert native.describe(_entry([one], **dict(both, copies=None))) is None


def test_entry_points_plan_as_served_only_what_cpp_will_repeat(device, monkeypatch):
    """planner.product's ``served`` (design.md: native-staging): tritonmm.mm, matmul and linear pass True only where
    C++ has not seen the product and will be told how to repeat it (native's answer None), matmul's batches of as
    many entries included; False where C++ leaves it to Python (its answer False), for an activation, for an out= of
    other strides, which C++ is never told of, and for batches C++ does not key (a matrix b, entries broadcast)."""
    from tritonmm import planner
    seen, real = [], planner.product
    monkeypatch.setattr(planner, "product",
                        lambda *args, **kw: seen.append(kw.get("served", False)) or real(*args, **kw))
    monkeypatch.setattr(native, "remember", lambda *args: None)
    for n, answer in enumerate((None, False)):
        monkeypatch.setattr(native, "repeat_mm", lambda *args, r=answer: r)
        monkeypatch.setattr(native, "repeat", lambda *args, r=answer: r)
        a, b = (torch.randn(8, 16 + n, device=device).bfloat16(),  # new sizes: no relaunch
                torch.randn(16 + n, 24, device=device).bfloat16())
        tritonmm.mm(a, b)
        tritonmm.matmul(a, b[:, :16])
        tritonmm.linear(a, b.T.contiguous())
        tritonmm.linear(a, b.T.contiguous()[:8], activation="relu")
        tritonmm.mm(a, b[:, :8], out=torch.empty(8, 16, device=device).bfloat16()[:, :8])  # rows 16 apart: never told
        a3, b3 = a.expand(3, 8, 16 + n), b.expand(3, 16 + n, 24)  # a batch, as bmm's: told, into out= too
        tritonmm.matmul(a3, b3)
        tritonmm.matmul(a3, b3, out=torch.empty(3, 8, 24, device=device).bfloat16())
        tritonmm.matmul(a3, b)  # a batch against a matrix (M folded): C++ keys none
        tritonmm.matmul(a3, b3[:1])  # entries broadcast: not bmm's
        told = answer is None
        assert seen == [told] * 3 + [False, False] + [told] * 2 + [False, False], (answer, seen)
        seen.clear()


def test_override_plans_the_calls_it_describes_as_served(monkeypatch):
    """aten's mm and addmm through native.cpp: a first call C++ asks to describe is planned as served (C++ repeats it),
    one it leaves to Python is not."""
    from tritonmm import override, planner
    seen = []
    monkeypatch.setattr(override, "takes", lambda *args, **kw: True)
    monkeypatch.setattr(planner, "product", lambda *args, **kw: seen.append(kw.get("served")) or "c")
    monkeypatch.setattr(override, "_description", lambda *args: "d")
    a, b, bias = torch.randn(4, 8), torch.randn(8, 6), torch.randn(6)
    assert override._native_mm(None, None, a, b, True) == ("c", "d")
    assert override._native_mm(None, None, a, b, False) == ("c", None)
    assert override._native_addmm(None, None, bias, a, b, 1, 1, True) == ("c", "d")
    assert override._native_addmm(None, None, bias, a, b, 1, 1, False) == ("c", None)
    a3, b3 = torch.randn(2, 4, 8), torch.randn(2, 8, 6)
    assert override._native_bmm(None, None, a3, b3, True) == ("c", "d")
    assert override._native_bmm(None, None, a3, b3, False) == ("c", None)
    assert seen == [True, False] * 3


def test_cached_copies_finds_the_launches_stage_makes(monkeypatch):
    """staging.cached_copies looks up copy's cache under the keys stage() launched with: two plain copies paired in
    one launch, one alone as its own pair; None where one is missing or a stager is not one plain copy."""
    from tritonmm import staging
    a, b = torch.randn(5, 7).bfloat16(), torch.randn(7, 9).bfloat16()
    ya, yb = staging.aligned_like(a), staging.aligned_like(b)
    pair, alone = object(), object()
    monkeypatch.setattr(staging, "_copy_launches", {staging._copy_key(a, ya, pair=(b, yb)): pair,
                                                    staging._copy_key(b, yb): alone})
    copies = [staging.aligned_copy, staging.aligned_copy]
    assert staging.cached_copies(copies, a, b, ya, yb) == ((pair, "ab"),)
    assert staging.cached_copies([None, staging.aligned_copy], a, b, None, yb) == ((alone, "b"),)
    assert staging.cached_copies([staging.aligned_copy, None], a, b, ya, None) is None  # not cached
    assert staging.cached_copies([staging.row_major_copy, None], a, b, ya, None) is None  # a transpose


class _Descriptor:
    def __init__(self, shape, strides, padding="zero"):
        self.shape, self.strides, self.padding, self.base = shape, strides, padding, None


def _tma_launch(padding="zero", meta=None):
    """A TMA kernel's launch as fast_launch.Compiled holds it: descriptors of A (40x56) and B (56x72, read K-major
    as a 72x56 matrix), C through a pointer, M."""
    sig = {"a_desc": "tensordesc<bf16[64, 64]>", "b_desc": "tensordesc<bf16[128, 64]>", "c": "*bf16",
           "bias": "constexpr", "sa": "constexpr", "sb": "constexpr", "M": "i32"}
    descriptors = (_Descriptor([40, 56], [56, 1], padding), _Descriptor([72, 56], [56, 1], padding))
    metas = meta or tuple(dict(swizzle=3, elem_size=2, elem_type=5, block_size=block, fp4_padded=False)
                          for block in ([64, 64], [128, 64]))
    return _compiled(sig, (40,), descriptors=descriptors, maps=({}, {}), maps_meta=metas)


def test_describe_lays_out_tensor_maps_and_row_offsets():
    """A descriptor is its tensor map (what native.cpp encodes over the operand's address: dimensions innermost
    first, the outer strides in bytes, the box from the kernel's metadata, the host's element type), then its
    shape as i32s and strides as i64s, as Triton's launchers expand it; a launch over some rows reads each tensor
    that many bytes past its address."""
    from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST
    if native._expanded("tensordesc<bf16[64, 64]>", {}) != ["nvTmaDesc", "i32", "i32", "i64", "i64"]:
        pytest.skip("this Triton expands descriptors otherwise: describe leaves them to Python")
    bf16 = TMA_DTYPE_DEVICE_TO_HOST[5]
    (launch,) = native.describe(_entry([_tma_launch()]))[3]
    params = launch[5]
    assert params[0] == (native.A, 128, 0, (bf16, 3, [56, 40], [112], [64, 64], 2))
    assert params[1:5] == [(native.VALUE, 4, 40), (native.VALUE, 4, 56), (native.VALUE, 8, 56), (native.VALUE, 8, 1)]
    assert params[5] == (native.B, 128, 0, (bf16, 3, [56, 72], [112], [64, 128], 2))
    assert params[10:] == [(native.OUT, 8, 0), (native.VALUE, 4, 40), (native.NULL_POINTER, 8, 0),
                           (native.NULL_POINTER, 8, 0)]
    parts = ((None, None, None, None, None, None), (4480, None, 2048, None, None, None))  # A's rows and C's from 40
    launches = native.describe(_entry([_tma_launch(), _tma_launch()], offsets=parts))[3]
    assert launches[0][5][0][2] == 0 and launches[1][5][0][2] == 4480 and launches[1][5][5][2] == 0
    assert launches[1][5][10] == (native.OUT, 8, 2048)


@pytest.mark.parametrize("refused", ["staged", "nan fill", "fp4", "cluster", "float", "not direct", "arity",
                                     "transposed"])
def test_describe_refuses_what_it_cannot_repeat(refused):
    sig = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "bias": "constexpr", "sa": "constexpr", "sb": "constexpr",
           "M": "fp32" if refused == "float" else "i32"}
    kw = {"cluster": dict(metadata=(4, 2, 0)), "not direct": dict(direct=None)}
    rest = (1, 2) if refused == "arity" else (3,)  # more arguments than the signature has
    compiled = _compiled(sig, rest, **kw.get(refused, {}))
    if refused == "nan fill":
        compiled = _tma_launch(padding="nan")
    elif refused == "fp4":
        compiled = _tma_launch(meta=(dict(swizzle=3, elem_size=1, elem_type=0, block_size=[64, 64], fp4_padded=True),) * 2)
    # "transposed": run as its transpose over copies (IEEE float32's x.T, design.md: ieee-transpose)
    over_copies = dict(swapped=True, stage=(1, 2), copies=())
    entry = _entry([compiled], **{"staged": dict(stage=(1, 2)), "transposed": over_copies}.get(refused, {}))
    assert native.describe(entry) is None
    if refused == "transposed":  # the same entry not swapped is described
        assert native.describe(_entry([compiled], **dict(over_copies, swapped=False))) is not None


def test_describe_gives_a_transposed_product_b_where_its_kernels_read_a():
    """A product run as its transpose (b.T @ a.T into out.T, design.md: native-eager-tma) without copies is described
    with its kernels' A read from the call's b and their B from its a, whole and in split-K's two launches; out, the
    workspace and the bias as they are."""
    sig = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "bias": "*bf16", "sa": "constexpr", "sb": "constexpr",
           "M": "i32"}
    whole = native.describe(_entry([_compiled(sig, (9,))], swapped=True))[3][0][5]
    assert [p[0] for p in whole[:4]] == [native.B, native.A, native.OUT, native.BIAS]
    reduce_sig = {"ws": "*fp32", "c": "*bf16", "bias": "*bf16", "sa": "constexpr", "sb": "constexpr", "M": "i32"}
    split_sig = dict(sig, bias="constexpr")
    first, second = native.describe(_entry([_compiled(split_sig, (9,)), _compiled(reduce_sig, (9,))],
                                           workspace=(2, 8, 16), swapped=True))[3]
    assert [p[0] for p in first[5][:3]] == [native.B, native.A, native.WORKSPACE]
    assert [p[0] for p in second[5][:3]] == [native.WORKSPACE, native.OUT, native.BIAS]
    # A wave-tail split's parts: each offset stays with its argument (the kernels' A, read from b, at A's offset)
    parts = ((None,) * 6, (4480, None, 2048, None, None, None))
    whole, part = native.describe(_entry([_compiled(sig, (9,))] * 2, swapped=True, offsets=parts))[3]
    assert part[5][0] == (native.B, 8, 4480) and part[5][1] == (native.A, 8, 0) and part[5][2] == (native.OUT, 8, 2048)


def test_describe_lays_out_a_wave_tail_in_slices_of_k():
    """A wave-tail split whose tail runs in slices of K (design.md: tail-slices): the head over the call's tensors, the
    slices over A's rows into the workspace, their sum from the workspace into C's rows with the bias's, each offset
    with the argument it moves (relaunch.Entry.offsets)."""
    sig = {"a": "*bf16", "b": "*bf16", "c": "*bf16", "bias": "*bf16", "sa": "constexpr", "sb": "constexpr",
           "M": "i32"}
    split_sig = dict(sig, bias="constexpr")
    reduce_sig = {"ws": "*fp32", "c": "*bf16", "bias": "*bf16", "sa": "constexpr", "sb": "constexpr", "M": "i32"}
    parts = ((None,) * 6, (4480, None, None, None, None, None), (None, 2048, 1024, None, None))
    described = native.describe(_entry([_compiled(sig, (9,)), _compiled(split_sig, (9,)), _compiled(reduce_sig, (9,))],
                                       workspace=(2, 8, 16), offsets=parts))
    assert described[2] == [2, 8, 16]
    head, slices, total = (launch[5] for launch in described[3])
    assert [p[:3] for p in head[:4]] == [(native.A, 8, 0), (native.B, 8, 0), (native.OUT, 8, 0), (native.BIAS, 8, 0)]
    assert [p[:3] for p in slices[:3]] == [(native.A, 8, 4480), (native.B, 8, 0), (native.WORKSPACE, 8, 0)]
    assert [p[:3] for p in total[:3]] == [(native.WORKSPACE, 8, 0), (native.OUT, 8, 2048), (native.BIAS, 8, 1024)]


@pytest.mark.skipif(HAS_GPU, reason="without CUDA only")
def test_not_built_or_used_without_cuda(monkeypatch):
    """Without CUDA nothing is built or loaded, even where TRITONMM_NATIVE asks to build; linear's fast path
    says so (False: Python serves it)."""
    monkeypatch.setenv("TRITONMM_NATIVE", "1")
    monkeypatch.setitem(native._state, "module", None)
    monkeypatch.setitem(native._state, "resolved", False)
    with mock.patch.object(native, "build", side_effect=AssertionError("built without CUDA")):
        assert native.module() is None
        assert native.repeat(torch.randn(2, 3), torch.randn(4, 3), None) is False


@pytest.mark.gpu
@pytest.mark.multigpu
def test_multigpu_repeats_on_the_operands_device(repeating):
    """Products on cuda:1 with cuda:0 current, repeated from C++: computed on cuda:1 (their own entries), correct,
    and cuda:0 still current after each call."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA GPUs")
    torch.cuda.set_device(0)
    seen = set()
    for index in (1, 0, 1):
        hits, repeated = native.stats()[0], native.stats()[3]
        for _ in range(3):
            a = torch.randn(8, 4096, device=f"cuda:{index}").bfloat16()
            w = torch.randn(1024, 4096, device=f"cuda:{index}").bfloat16()
            bias = torch.randn(1024, device=f"cuda:{index}").bfloat16()
            for out, ref in ((torch.mm(a, w.T), a.double() @ w.double().T),
                             (tritonmm.linear(a, w, bias), a.double() @ w.double().T + bias.double())):
                assert out.device == a.device and torch.cuda.current_device() == 0
                assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.bfloat16]
        # mm and linear + bias: two entries a device, made on its first visit; the later calls repeated
        assert native.stats()[3] == repeated + (0 if index in seen else 2)
        assert native.stats()[0] >= hits + (6 if index in seen else 4)
        seen.add(index)
