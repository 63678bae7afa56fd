"""The planner's paths beyond one plain launch: split-K, operands staged for TMA, the path rule,
and the launch cache the public ops consult before their checks."""
import math

import pytest
import torch
from conftest import every_product_on_the_tma_kernel, every_product_on_tma, every_product_staged_for_pointer, \
    rel_err

import tritonmm
from tritonmm import config_space, cost_model, default_config, device as devices, launch as launching, layout as layout_module, native, planner, product, \
    relaunch, rules, splits, thresholds, validation
from tritonmm.product import Product
from tritonmm.tune import operands

BOUND = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
DTYPES = [torch.float16, torch.bfloat16, torch.float32]


def nan_out(M, N, dtype, device):
    return torch.full((M, N), float("nan"), dtype=dtype, device=device)


def linear_ref(x, w, bias, act):
    return planner.epilogue_reference(x.double() @ w.double().T, None if bias is None else bias.double(), act)


@pytest.fixture
def pointer(monkeypatch):
    """Every product on the pointer kernel, where split-K runs."""
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 0)  # the caller's operands, as they are


# K not a multiple of any slice: the last slice is short, and at 40 x 16-wide steps split 4 ways
# one slice is empty (it stores zeros). M and N leave ragged edge tiles.
SPLIT_SHAPES = [(1, 72, 200), (5, 33, 40), (37, 130, 257), (64, 64, 1024)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("split", [2, 3, 4, 16])
@pytest.mark.parametrize("shape", SPLIT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_split_k_against_float64(shape, split, dtype, device, pointer):
    cfg = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=16, SPLIT_K=split, num_warps=4, num_stages=2)
    for layout in ("NN", "NT"):
        a, b = operands(*shape, dtype, layout, device)
        out = tritonmm.matmul(a, b, out=nan_out(shape[0], shape[1], dtype, device), config=cfg,
                              input_precision="ieee" if dtype == torch.float32 else None)
        assert rel_err(out, a, b) < BOUND[dtype]


def test_split_k_runs_two_passes_and_is_deterministic(device, pointer, monkeypatch):
    """Split-K launches the sliced product and the ordered sum; two runs agree bit for bit."""
    a, b = operands(9, 40, 300, torch.float32, "NN", device)
    launched = []
    real = launching.launcher
    monkeypatch.setattr(launching, "launcher", lambda kernel, traced: launched.append(kernel) or real(kernel, traced))
    cfg = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=4)
    first = tritonmm.mm(a, b, config=cfg, input_precision="ieee")
    assert launched == [product.gemm_kernel, product.split_k_reduce_kernel]
    assert torch.equal(first, tritonmm.mm(a, b, config=cfg, input_precision="ieee"))
    assert rel_err(first, a, b) < 1e-5


@pytest.mark.parametrize("act", ["relu", "gelu", "gelu_tanh", "silu"])
def test_split_k_applies_the_epilogue_once(act, device, pointer):
    x, w, bias = torch.randn(3, 96, device=device), torch.randn(40, 96, device=device), torch.randn(40, device=device)
    cfg = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=3)
    y = tritonmm.linear(x, w, bias, act, config=cfg, input_precision="ieee")
    ref = linear_ref(x, w, bias, act)
    assert ((y.double() - ref).norm() / ref.norm()) < 1e-5


def test_split_k_where_it_cannot_apply_is_one_launch(device, path):
    """A pinned SPLIT_K is how to run, not what to compute: either kernel splits a matrix product, a
    batch ignores it, and the result is the same product."""
    a, b = operands(48, 80, 96, torch.float16, "NN", device)
    cfg = dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=4)
    assert rel_err(tritonmm.mm(a, b, config=cfg), a, b) < 2e-3
    launch = Product(a, b, torch.empty(48, 80, dtype=torch.float16, device=device), "native")
    assert launch.path == path and len(launch.steps(config_space.make_config(16, 16, 16, 2, 4, SPLIT_K=4))) == 2
    za, zb = torch.randn(3, 20, 64, device=device), torch.randn(3, 64, 24, device=device)
    batch = Product(za, zb, torch.empty(3, 20, 24, device=device), "ieee")
    assert len(batch.steps(config_space.make_config(16, 16, 16, 2, 4, SPLIT_K=4))) == 1
    assert torch.allclose(tritonmm.matmul(za, zb, config=cfg, input_precision="ieee"), za @ zb, atol=1e-4)


@pytest.fixture
def tma_kernel(monkeypatch, device):
    """Every product on the TMA kernel, staging what TMA cannot read: on a GPU that has TMA, and on the
    CPU in Triton's interpreter as a stand-in Hopper of 4 SMs (each persistent program walks several units)."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)


# K steps of 16 per shape, and slices: 9 steps in 4 slices of 3 leave the last one empty (it stores zeros),
# 13 in 3 slices of 5 a short last one, 4 in 2 even ones. M and N leave ragged edge tiles.
TMA_SPLIT_SHAPES = [((37, 70, 144), 4), ((64, 48, 200), 3), ((5, 130, 64), 2)]


@pytest.mark.parametrize("layout, dtype", [("NN", torch.bfloat16), ("NT", torch.bfloat16), ("TN", torch.bfloat16),
                                           ("TT", torch.bfloat16), ("NT", torch.float16), ("NN", torch.float32)],
                         ids=str)
@pytest.mark.parametrize("shape, split", TMA_SPLIT_SHAPES,
                         ids=lambda s: "x".join(map(str, s)) if isinstance(s, tuple) else str(s))
def test_tma_split_k_against_float64(shape, split, layout, dtype, device, tma_kernel):
    """The TMA kernel's units of (slice, tile) leave fp32 partial sums that the second pass adds up: every
    layout, staged operands (odd K), a C stored through pointers (odd N) and empty or short slices."""
    M, N, K = shape
    a, b = operands(M, N, K, dtype, layout, device)
    out = nan_out(M, N, dtype, device)
    launch = Product(a, b, out, "ieee" if dtype == torch.float32 else "native")
    cfg = config_space.make_config(16, 32, 16, 2, 4, SPLIT_K=split)
    assert launch.path == "tma" and launch.split(cfg) == split and launch.launches(cfg) == 2
    assert [step[0] for step in launch.steps(cfg)] == [product.gemm_tma_kernel, product.split_k_reduce_kernel]
    launch.run(cfg)
    assert rel_err(out, a, b) < BOUND[dtype]


# Ragged rows and columns of 32x32 tiles: the last of each moves back inside C (70 rows: from 64 to 48; 100
# columns: from 96 to 80); 99 columns store C through pointers.
SHIFT_SHAPES = [(70, 100, 48), (70, 99, 40), (100, 70, 64)]


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", SHIFT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tma_last_tiles_move_back_inside_c(shape, layout, device, tma_kernel):
    """The TMA kernel's last row and column of tiles start where they end at C's edge (SHIFT): the rows and
    columns they share with the tiles before them come out right, whole and split over K, and on the GPU bit
    for bit as with the tiles where the grid puts them (zero-filled past the operands' ends)."""
    M, N, K = shape
    a, b = operands(M, N, K, torch.bfloat16, layout, device)
    out = nan_out(M, N, torch.bfloat16, device)
    launch = Product(a, b, out, "native")
    assert launch.path == "tma" and launch.constants["SHIFT"]
    for split in (1, 2):
        cfg, results = config_space.make_config(32, 32, 16, 2, 4, SPLIT_K=split), []
        for shift in (True, False):
            out.fill_(float("nan"))
            for kernel, grid, args, constants, options in launch.steps(cfg):
                shifted = dict(constants, SHIFT=shift) if kernel is product.gemm_tma_kernel else constants
                launching.launch_step((kernel, grid, args, shifted, options))
            assert rel_err(out, a, b) < BOUND[torch.bfloat16], (split, shift)
            results.append(out.clone())
        if device == "cuda":
            assert torch.equal(*results), split


def test_tma_split_k_is_deterministic_and_applies_the_epilogue_once(device, tma_kernel):
    x, w, bias = (torch.randn(*s, device=device).bfloat16() for s in ((33, 256), (40, 256), (40,)))
    cfg = dict(BLOCK_M=16, BLOCK_N=32, BLOCK_K=32, SPLIT_K=3, num_warps=4, num_stages=2)
    y = tritonmm.linear(x, w, bias, "gelu", config=cfg)
    assert torch.equal(y, tritonmm.linear(x, w, bias, "gelu", config=cfg))
    ref = linear_ref(x, w, bias, "gelu")
    assert ((y.double() - ref).norm() / ref.norm()) < 1e-2


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_short_tiles_on_the_tma_kernel_against_float64(layout, device, tma_kernel):
    """The short tiles offered to products of few rows (config_space.short), pinned on the TMA kernel: one row
    tile (8 rows, the box's rows past M zero-filled) and two (24: a partial second), every layout (M a multiple
    of 8, so a transposed A's rows stay 16-byte aligned and the product unstaged), a ragged N and K; and with a
    bias and activation in the epilogue."""
    for M in (8, 24):
        a, b = operands(M, 72, 200, torch.bfloat16, layout, device)
        for cfg in config_space.short_space("16bit"):
            out = nan_out(M, 72, torch.bfloat16, device)
            launch = Product(a, b, out, "native")
            assert launch.path == "tma" and cfg in launch.candidates()
            launch.run(cfg)
            assert rel_err(out, a, b) < BOUND[torch.bfloat16], (M, cfg)
    x, w, bias = (torch.randn(*s, device=device).bfloat16() for s in ((12, 200), (72, 200), (72,)))
    cfg = config_space.short_space("16bit")[0]
    y = tritonmm.linear(x, w, bias, "gelu", config=dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages))
    ref = linear_ref(x, w, bias, "gelu")
    assert ((y.double() - ref).norm() / ref.norm()) < 1e-2


def test_short_tiles_offered_to_few_rows_on_the_tma_kernel_only(monkeypatch, device):
    short = config_space.short_space("16bit")

    def offered(M, tma):
        if tma:
            every_product_on_the_tma_kernel(monkeypatch, device)
        a, b = operands(M, 5120, 256, torch.bfloat16, "NT", device)
        launch = Product(a, b, torch.empty(M, 5120, dtype=torch.bfloat16, device=device), "native")
        assert launch.path == ("tma" if tma else "pointer")
        return [c in launch.candidates() for c in short]
    assert offered(12, False) == [False] * len(short)  # the pointer kernel: not measured there
    assert offered(32, True) == [True] * len(short)
    assert offered(33, True) == [False] * len(short)


def test_ieee_float32_takes_the_pointer_kernel(device, monkeypatch):
    """design.md: ieee-pointer. A float32 product in IEEE precision, however large, takes the pointer kernel (its
    FMA dot ran 5-10x faster than the TMA kernel's); thresholds' ieee_tma puts it back on the TMA kernel."""
    hopper = devices.DeviceFacts("h", 132, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: hopper)
    a, b = torch.randn(2048, 1024, device=device), torch.randn(1024, 2048, device=device)
    for operand, path in ((b, "pointer"), (b.T.contiguous().T, "pointer+staged")):  # NN; x @ W.T (ieee-n-major)
        assert planner.chosen(a, operand, "ieee")[1] == path
        with thresholds.override(ieee_tma=True):
            assert planner.chosen(a, operand, "ieee")[1] == "tma"
    za, zb = a.expand(4, -1, -1), b.expand(4, -1, -1).contiguous()  # a batch: one launch, not an entry at a time
    assert planner.chosen(za.contiguous(), zb, "ieee")[1] == "pointer"


def test_ieee_b_along_k_is_copied_n_major(device, monkeypatch):
    """design.md: ieee-n-major. An IEEE float32 product of two or more rows on the pointer kernel reads a B that runs
    along K (x @ W.T, and TT) from an N-major copy: in a CUDA graph from ieee_n_major_min_macs multiply-adds, eagerly
    from ieee_n_major_eager_min_macs; never a B along N or TF32; traced, such products run opaque
    (rules.runs_opaque). The result of the copied B is float64's. Batches: test_ieee_batches_read_b_from_one_n_major_copy."""
    hopper = devices.DeviceFacts("h", 132, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: hopper)
    th = thresholds.for_device(hopper)
    N, K = 256, 1024

    def stagers(macs, layout_, precision="ieee", captured=True):
        M = math.ceil(macs / (N * K))
        a, b = operands(M, N, K, torch.float32, layout_, device)
        return Product(a, b, torch.empty(M, N, device=device), precision, captured=captured).stagers

    copy = tritonmm.staging.n_major_copy
    graph_bar, eager_bar = th.ieee_n_major_min_macs, th.ieee_n_major_eager_min_macs
    assert 2 * N * K < graph_bar < eager_bar
    for layout_ in ("NT", "TT"):
        assert stagers(graph_bar, layout_) == [None, copy]
        assert stagers(graph_bar - N * K, layout_) == [None, None]  # a row fewer: below the bar
    assert stagers(graph_bar, "NT", captured=False) == [None, None]  # eagerly: below its bar
    assert stagers(eager_bar, "NT", captured=False) == [None, copy]
    for layout_ in ("NN", "TN"):
        assert stagers(eager_bar, layout_) == [None, None]  # B along N already
    assert stagers(graph_bar, "NT", precision="tf32") == [None, None]  # TF32: K-major for wgmma
    with thresholds.override(ieee_n_major_min_macs=float("inf")):
        assert stagers(eager_bar, "NT") == [None, None]
    # Between the bars: a plan only CUDA graphs run, kept apart from the eager one's (tuning key, relaunch)
    between = operands(math.ceil(graph_bar / (N * K)), N, K, torch.float32, "NT", device)
    out = torch.empty(between[0].shape[0], N, device=device)
    assert Product(*between, out, "ieee", captured=True).graph_only
    assert Product(*between, out, "ieee", captured=False).differs_when_captured
    # Traced, such a product goes into a compiled graph opaque, so that the planner makes the copy when it runs
    a, b = operands(2048, 1024, 16, torch.float32, "NT", device)  # past the graph bar, short of the TMA kernel's
    assert rules.runs_opaque(a, b, "ieee") and not rules.runs_opaque(a, b, "tf32")
    assert not rules.runs_opaque(a, b.contiguous(), "ieee")  # B along N: nothing to copy
    with thresholds.override(ieee_n_major_min_macs=0, ieee_n_major_eager_min_macs=0):
        assert stagers(1, "NT") == [None, None]  # one row: the one-row kernel's, which reads the caller's B
        w = torch.randn(1, K, device=device)  # one column: W.T of a one-row W is contiguous already
        assert Product(torch.randn(3, K, device=device), w.T, torch.empty(3, 1, device=device), "ieee").stagers == \
            [None, None]
        a, b = operands(67, 40, 45, torch.float32, "NT", device)  # small enough for the interpreter
        plan = Product(a, b, nan_out(67, 40, torch.float32, device), "ieee")
        assert plan.stagers == [None, copy] and plan.b.stride(1) == 1 and plan.layout == "NN"
        plan.run(plan.heuristic())
        assert rel_err(plan.out, a, b) < BOUND[torch.float32]
        out = nan_out(67, 40, torch.float32, device)
        assert rel_err(tritonmm.mm(a, b, out=out, input_precision="ieee"), a, b) < BOUND[torch.float32]


def test_ieee_few_rows_take_the_row_kernel_over_b_as_given(device, monkeypatch):
    """design.md: ieee-rows. An IEEE float32 product of 2 to ieee_rows_max_rows rows whose B runs along K runs on the
    row kernel, 2, 4 or 8 rows a program, over B as given (no N-major copy), where its programs cover the SMs; more
    rows, fewer columns, B along N and TF32 keep their plans. Its results are float64's."""
    hopper = devices.DeviceFacts("h", 132, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: hopper)
    most = thresholds.for_device(hopper).ieee_rows_max_rows
    N, K = 132 * 8, 512  # one 8-column block a program: every SM covered from one block of rows

    def plan(M, n=N, layout_="NT", precision="ieee", Z=1):
        a, b = operands(M, n, K, torch.float32, layout_, device)
        if Z > 1:
            a, b = a.expand(Z, -1, -1), b.expand(Z, -1, -1)
        with thresholds.override(ieee_n_major_min_macs=0):  # whatever the row kernel leaves is copied
            launch = Product(a, b, torch.empty(*a.shape[:-1], n, device=device), precision, captured=True)
        return launch, launch.heuristic()
    for M, rows in ((2, 2), (3, 4), (4, 4), (5, 8), (8, 8), (most, 8)):
        launch, cfg = plan(M)
        assert config_space.is_gemv(cfg) and cfg.kwargs["BLOCK_M"] == rows and launch.stagers == [None, None], M
        assert cfg in launch.candidates()
    launch, cfg = plan(most + 1)
    assert not config_space.is_gemv(cfg) and launch.stagers == [None, tritonmm.staging.n_major_copy]
    launch, cfg = plan(2, N // 2)  # half the SMs' worth of programs: the pointer kernel over the copy
    assert not config_space.is_gemv(cfg) and launch.stagers == [None, tritonmm.staging.n_major_copy]
    launch, cfg = plan(2, N // 8, Z=8)  # a batch's programs together cover them
    assert config_space.is_gemv(cfg) and launch.stagers == [None, None]
    for layout_, precision in (("NN", "ieee"), ("NT", "tf32")):
        assert not config_space.is_gemv(plan(4, layout_=layout_, precision=precision)[1])
    with thresholds.override(ieee_rows_max_rows=1):
        assert not config_space.is_gemv(plan(4)[1])
    # Tuned apart: rows of 2-16 share a bucket, and the key names the rows a program the tuner times
    keys = {M: plan(M)[0].tuning_key for M in (2, 4, 8, 16)}
    assert keys[2] != keys[4] != keys[8] == keys[16] and plan(2, N // 2)[0].tuning_key != keys[2]
    one_sm = devices.DeviceFacts("h", 1, 232448, True, True)  # small sizes for the interpreter: every SM covered
    monkeypatch.setattr(devices, "facts", lambda d: one_sm)
    for M in (2, 5, 11):
        a, b = operands(M, 29, 45, torch.float32, "NT", device)
        assert config_space.is_gemv(planner.chosen(a, b, "ieee")[0])
        out = nan_out(M, 29, torch.float32, device)
        assert rel_err(tritonmm.mm(a, b, out=out, input_precision="ieee"), a, b) < BOUND[torch.float32]
    # With a bias and an activation, into rows of a larger NaN buffer: the rows past M in the last program are
    # never written (11 rows, 8 a program)
    x, w, bias = torch.randn(11, 45, device=device), torch.randn(29, 45, device=device), torch.randn(29, device=device)
    big = torch.full((16, 40), float("nan"), device=device)
    launch = Product(x, w.T, big[:11, :29], "ieee", bias=bias, activation="silu")
    cfg = launch.heuristic()
    assert cfg.kwargs["BLOCK_M"] == 8 and launch.stagers == [None, None]
    launch.run(cfg)
    ref = planner.epilogue_reference(x.double() @ w.double().T, bias.double(), "silu")
    assert ((big[:11, :29].double() - ref).norm() / ref.norm()).item() < BOUND[torch.float32]
    assert big[11:].isnan().all() and big[:, 29:].isnan().all()
    x = torch.randn(11, 45, device=device).T.contiguous().T  # A's rows apart in memory (column-major): any strides
    assert config_space.is_gemv(planner.chosen(x, w.T, "ieee")[0])
    assert rel_err(tritonmm.mm(x, w.T, out=nan_out(11, 29, torch.float32, device), input_precision="ieee"), x, w.T) < \
        BOUND[torch.float32]


@pytest.mark.parametrize("M,bias_shape,activation,out_t", [
    (17, None, "none", False), (40, "N", "silu", False), (100, "M1", "relu", True), (128, "MN", "gelu", False)])
def test_ieee_x_w_t_of_more_rows_runs_as_its_transpose_in_a_graph(M, bias_shape, activation, out_t, device,
                                                                   monkeypatch):
    """design.md: ieee-transpose. In a CUDA graph an IEEE float32 x @ W.T of ieee_transpose_min_rows to
    ieee_transpose_max_rows rows against ieee_transpose_min_n weight rows or more runs as its transpose, out.T = W @
    x.T, x.T copied N-major, on config_space.IEEE_TRANSPOSED's tile and slices of K for its rows; eagerly from
    ieee_n_major_eager_min_macs too, relaunched from the cache (a GPU's) by planner.product and linear; fewer or more
    rows, fewer weight rows, B along N, TF32, batches and small products keep their plans. planner.product builds the
    transposed plan (counted); the result, with each bias broadcast and an activation, into a NaN-filled row- or
    column-major out, is float64's. Captured in a CUDA graph on a GPU; in the interpreter, capture is what the planner
    is told (small weights: the bars lowered)."""
    hopper = devices.DeviceFacts("h", 132, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: hopper)
    th = thresholds.for_device(hopper)
    K = 1024  # 17 rows of it past ieee_n_major_min_macs
    x, w = torch.randn(M, K, device=device), torch.randn(th.ieee_transpose_min_n, K, device=device)
    cfg, path = planner.chosen(x, w.T, "ieee", captured=True)
    _, tile, split = next(r for r in config_space.IEEE_TRANSPOSED if M <= r[0])
    assert path == "pointer+staged+transposed" and config_space.as_list(cfg)[:3] == list(tile[:3])
    assert config_space.split_k(cfg) == split and (cfg.num_stages, cfg.num_warps) == tile[3:]
    assert "transposed" not in planner.chosen(x, w.T, "ieee")[1]  # eagerly below ieee_n_major_eager_min_macs
    n = th.ieee_transpose_min_n
    for rows, cols, layout_, precision in ((th.ieee_transpose_min_rows - 1, n, "NT", "ieee"),
                                           (th.ieee_transpose_max_rows + 1, n, "NT", "ieee"),
                                           (M, n - 8, "NT", "ieee"), (M, n, "NN", "ieee"), (M, n, "NT", "tf32")):
        a, b = operands(rows, cols, K, torch.float32, layout_, device)  # the rule alone: planning them copies W
        assert not planner.transposed(a, b, (None, None), True, precision), (rows, cols, layout_, precision)
    a, b = operands(M, n, 8, torch.float32, "NT", device)
    assert M * n * 8 < th.ieee_n_major_min_macs and not planner.transposed(a, b, (None, None), True, "ieee")
    with thresholds.override(ieee_transpose_max_rows=0):
        assert not planner.transposed(x, w.T, (None, None), True, "ieee")
    assert not planner.transposed(x.expand(2, -1, -1), w.T.expand(2, -1, -1), (None, None), True, "ieee")  # a batch
    a, b = operands(th.ieee_rows_max_rows, n, K, torch.float32, "NT", device)
    with thresholds.override(ieee_rows_max_rows=1):  # the row kernel off: its rows are not transposed either
        assert not planner.transposed(a, b, (None, None), True, "ieee")
    # What python -m tritonmm.tune tunes: an eager call's plan, transposed from the eager bar (lowered here)
    assert not planner.eager_plan(x, w.T, nan_out(M, n, torch.float32, device), "ieee").transposed
    with thresholds.override(ieee_n_major_eager_min_macs=0):
        assert planner.eager_plan(x, w.T, nan_out(M, n, torch.float32, device), "ieee").transposed
    # Short K: as many of the slices as keep splits.MIN_SPLIT_STEPS K steps each
    assert config_space.split_k(default_config.ieee_transposed(M, 2 * tile[2] * splits.MIN_SPLIT_STEPS)) == 2
    N, K = 200, 300  # run: small enough for the interpreter, the bars lowered to take it
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_transpose_min_n", N)
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_n_major_min_macs", 0)
    x, w = torch.randn(M, K, device=device), torch.randn(N, K, device=device)
    shapes = {None: None, "N": (N,), "M1": (M, 1), "MN": (M, N)}
    bias = None if bias_shape is None else torch.randn(*shapes[bias_shape], device=device)
    assert planner.chosen(x, w.T, "ieee", bias, activation, captured=True)[1] == "pointer+staged+transposed"
    made, plan_of = [], planner._transposed_plan
    monkeypatch.setattr(planner, "_transposed_plan", lambda *args: made.append(1) or plan_of(*args))
    out = nan_out(N, M, torch.float32, device).T if out_t else nan_out(M, N, torch.float32, device)
    from bench.common import rel_err as relative_error
    with thresholds.override(ieee_n_major_eager_min_macs=0):  # eagerly too, from the eager bar (lowered here)
        assert planner.chosen(x, w.T, "ieee", bias, activation)[1] == "pointer+staged+transposed"
        for _ in range(2):  # on a GPU the second call relaunches from the cache, x.T copied again
            x.copy_(torch.randn_like(x))
            out.fill_(float("nan"))
            planner.product(x, w.T, precision="ieee", bias=bias, activation=activation, out=out)
            ref = planner.epilogue_reference(x.double() @ w.double().T, None if bias is None else bias.double(),
                                             activation)
            assert relative_error(out, ref) < BOUND[torch.float32]
        if device == "cuda":
            known = relaunch.cached(relaunch.key(x, w.T, out, bias, activation, "ieee"))
            assert known.swapped and native.describe(known) is None  # Python relaunches it, not native.cpp
        if bias_shape in (None, "N"):  # linear's: the weight as given, its own cache entry and relaunch
            with torch.no_grad():
                for _ in range(2):
                    x.copy_(torch.randn_like(x))
                    y = tritonmm.linear(x, w, bias, None if activation == "none" else activation,
                                        input_precision="ieee")
                    ref = planner.epilogue_reference(x.double() @ w.double().T,
                                                     None if bias is None else bias.double(), activation)
                    assert relative_error(y, ref) < BOUND[torch.float32]
    # chosen's, each first call's (then relaunched on a GPU): planner.product's, and linear's where it ran
    assert len(made) == 2 + (bias_shape in (None, "N")) + (device != "cuda") * (1 + (bias_shape in (None, "N")))
    made.clear()
    if device == "cuda":  # the eager call runs another plan: the transposed one compiles inside the capture
        planner.product(x, w.T, precision="ieee", bias=bias, activation=activation, out=out)
        out.fill_(float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            planner.product(x, w.T, precision="ieee", bias=bias, activation=activation, out=out)
        graph.replay()
        torch.cuda.synchronize()
        first = out.clone()
        x.copy_(torch.randn_like(x))  # the graph's copy of x.T reads the new x
        graph.replay()
        torch.cuda.synchronize()
        assert not torch.equal(first, out)
    else:
        monkeypatch.setattr(launching, "capturing", lambda t: True)
        planner.product(x, w.T, precision="ieee", bias=bias, activation=activation, out=out)
    assert made, "planner.product did not run the transposed plan"
    ref = planner.epilogue_reference(x.double() @ w.double().T, None if bias is None else bias.double(), activation)
    assert relative_error(out, ref) < BOUND[torch.float32]


def test_ieee_batches_read_b_from_one_n_major_copy(device, monkeypatch):
    """design.md: ieee-n-major. An IEEE float32 batch whose B runs along K (q @ k.T; experts' x @ W.T) reads B from an
    N-major copy made in one 2-D launch where its entries are stacked (B.T's rows, batch stride N of them) or one
    broadcasts, under the same bars as an unbatched product over the batch's multiply-adds; entries laid out
    otherwise keep B as it is. The results of the copies are float64's, and traced, such a batch runs opaque."""
    hopper = devices.DeviceFacts("h", 132, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: hopper)
    th = thresholds.for_device(hopper)
    copy = tritonmm.staging.n_major_copy
    Z, N, K = 4, 128, 256
    M = math.ceil(th.ieee_n_major_min_macs / (Z * N * K))
    a, b = torch.randn(Z, M, K, device=device), torch.randn(Z, N, K, device=device).transpose(1, 2)

    def stagers(a, b, precision="ieee", captured=True):
        return Product(a, b, torch.empty(a.shape[0], a.shape[1], b.shape[-1], device=device), precision,
                       captured=captured).stagers
    assert stagers(a, b) == [None, copy]
    assert stagers(a[:, :M - 1], b) == [None, None]  # a row fewer: below the bar
    assert stagers(a, b, captured=False) == [None, None]  # eagerly: below its bar
    assert stagers(a, b, "tf32") == [None, None] and stagers(a, b.contiguous()) == [None, None]
    padded = torch.randn(Z, N, K + 8, device=device)[:, :, :K].transpose(1, 2)  # rows K + 8 apart: stacked still
    assert stagers(a, padded) == [None, copy]
    gapped = torch.randn(Z, N + 3, K, device=device)[:, :N].transpose(1, 2)  # entries N + 3 rows apart: not stacked
    assert stagers(a, gapped) == [None, None]
    shared = torch.randn(N, K, device=device).T.expand(Z, K, N)  # one weight, batch stride 0
    assert stagers(a, shared) == [None, copy]
    assert rules.runs_opaque(a, b, "ieee") and not rules.runs_opaque(a, gapped, "ieee")
    with thresholds.override(ieee_n_major_min_macs=0, ieee_n_major_eager_min_macs=0):
        small_a = torch.randn(3, 37, 40, device=device)  # small enough for the interpreter
        for small_b in (torch.randn(3, 29, 40, device=device).transpose(1, 2),
                        torch.randn(3, 29, 48, device=device)[:, :, 5:45].transpose(1, 2),  # an offset, padded rows
                        torch.randn(29, 40, device=device).T.expand(3, 40, 29),
                        torch.randn(1, 29, 40, device=device).transpose(1, 2).expand(3, 40, 29)):
            out = torch.full((3, 37, 29), float("nan"), device=device)
            plan = Product(small_a, small_b, out, "ieee")
            assert plan.stagers == [None, copy] and plan.b.stride(-1) == 1 and plan.layout == "NNb"
            assert torch.equal(plan.b, small_b)  # the copy, entry by entry
            plan.run(plan.heuristic())
            assert rel_err(out, small_a, small_b) < BOUND[torch.float32]
            out = torch.full((3, 37, 29), float("nan"), device=device)
            assert rel_err(tritonmm.matmul(small_a, small_b, out=out, input_precision="ieee"), small_a, small_b) < \
                BOUND[torch.float32]


def test_tma_split_rule():
    """Slices where the tiles leave SMs idle, K is long and the workspace small beside the operands: the
    shapes measured for design.md's tma-split-k (128x256x64 tiles on 132 SMs)."""
    def split(M, N, K, bm=128, bn=256):
        return splits.tma_split_for(M, N, K, bm, bn, 64, 2, 132)
    assert split(134, 5120, 13824) == 3  # 40 tiles: 120 units (0.84 -> 0.96x cuBLAS)
    assert split(288, 8192, 28672) == 4  # 96 tiles: 384 units in 3 waves (0.73 -> 0.78)
    for shape in ((284, 5120, 5120), (487, 5120, 5120), (149, 8192, 3072), (577, 5120, 13824)):
        assert split(*shape) == 1, shape  # a workspace of 19% or more of the operands: split lost
    assert split(4096, 4096, 4096) == 1  # 512 tiles fill their waves
    assert split(16, 256, 1024) == 1  # one tile but 16 K steps: too short to slice
    assert split(16, 256, 4096) == 1  # no count up to the 4 slices of 16 steps that K allows fills 132 SMs
    assert splits.tma_split_for(16, 256, 4096, 128, 256, 64, 2, 4) == 4  # but 4 SMs
    cfgs = [config_space.make_config(128, 256, 64, 4, 8), config_space.make_config(128, 256, 64, 3, 8),
            config_space.make_config(64, 64, 128, 4, 4)]
    offered = splits.with_tma_split(cfgs, 134, 5120, 13824, 2, 132)
    assert [(c.kwargs["BLOCK_M"], c.num_stages, config_space.split_k(c)) for c in offered] == \
        [(128, 4, 1), (128, 4, 3), (128, 3, 1), (64, 4, 1)]  # the first config of a tile shape; 64x64 fills


def test_tma_split_pays_by_the_cost_model():
    """With the H100's rates and bandwidth, a split is offered where the K steps it saves the busiest SM outweigh
    twice its workspace's traffic (design.md: tma-split-k): the measured wins, not the measured losses."""
    hbm = 3.352e12  # the H100's memory clock x bus width (device.hbm_bytes_per_s)

    def split(M, N, K, arch="sm90", bandwidth=hbm):
        cfg = config_space.make_config(128, 256, 64, 4, 8)
        return splits.tma_split_for(M, N, K, 128, 256, 64, 2, 132, lambda s: cost_model.tma_split_pays(
            cfg, s, arch, M, N, K, 132, bandwidth))
    assert split(497, 5120, 13824) == 3  # workspace 20% of the operands: 0.73 -> 0.83x cuBLAS in 3 slices
    assert split(134, 5120, 13824) == 3 and split(288, 8192, 28672) == 4 and split(200, 8192, 28672) == 2
    for shape in ((577, 5120, 13824), (487, 5120, 5120), (800, 3072, 8192)):
        assert split(*shape) == 1, shape  # the workspace's traffic costs more than the slices save
    assert split(4096, 4096, 4096) == 1
    # No rate or no bandwidth: the workspace bounded by bytes, as without a model
    assert split(497, 5120, 13824, arch="default") == split(497, 5120, 13824, bandwidth=None) == 1
    assert split(134, 5120, 13824, arch="default") == 3


def test_tuner_offers_tma_split_k(device, monkeypatch):
    """On the TMA path the candidates hold a split variant where tma_split_for splits (a 4-SM stand-in
    Hopper: one 64x64 output, K of 8192), never for operands split into TF32 parts."""
    stand_in = devices.DeviceFacts("stand-in Hopper", 4, 232448, True, True)
    monkeypatch.setattr(devices, "facts", lambda d: stand_in)
    every_product_on_tma(monkeypatch)
    a, b = (torch.empty(64, 8192, dtype=torch.bfloat16, device=device) for _ in range(2))
    launch = Product(a, b.T, torch.empty(64, 64, dtype=torch.bfloat16, device=device), "native")
    splits = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], config_space.split_k(c)) for c in launch.candidates()}
    assert launch.path == "tma" and {(64, 64, 4), (64, 32, 2)} <= splits  # 64 and 32 steps of K: 4 and 2 slices
    assert config_space.split_k(launch.heuristic()) == 1
    x, y = (torch.empty(64, 4096, device=device) for _ in range(2))
    presplit = Product(x, y.T, torch.empty(64, 64, device=device), "tf32x3")
    assert presplit.presplit and not presplit.can_split
    assert all(config_space.split_k(c) == 1 for c in presplit.candidates())


def test_split_k_rule_fills_the_sms():
    assert splits.split_for(tiles=64, k_steps=32, num_sms=132) == 4  # 1x4096x4096, 64x64x128 tiles
    assert splits.split_for(tiles=256, k_steps=32, num_sms=132) == 1  # tiles fill the SMs already
    assert splits.split_for(tiles=1, k_steps=6, num_sms=132) == 1  # K too short to slice
    assert splits.split_for(tiles=1, k_steps=10_000, num_sms=132) == splits.MAX_SPLIT_K
    variants = splits.with_split_k([config_space.make_config(64, 64, 128, 4, 4)], 1, 4096, 4096, 132)
    assert [config_space.split_k(c) for c in variants] == [1, 4, 8]


def test_heuristic_and_tuner_know_split_k(device, pointer):
    a, b = operands(4, 16, 4096, torch.float16, "NT", device)  # one tile: split-K's case
    launch = Product(a, b, torch.empty(4, 16, dtype=torch.float16, device=device), "native")
    assert launch.can_split and config_space.split_k(launch.heuristic()) > 1
    assert any(config_space.split_k(c) > 1 for c in launch.candidates())
    assert rel_err(tritonmm.matmul(a, b), a, b) < 2e-3  # the heuristic's split-K config


def test_tuner_offers_narrow_tiles_to_products_of_few_tiles(device):
    narrow = config_space.narrow_space("16bit")
    sms = devices.facts(torch.device(device)).num_sms
    for tiles, offered in ((sms - 1, True), (sms, False)):  # 64x64 tiles of C: one SM idle, or none
        a, b = operands(64, 64 * tiles, 256, torch.bfloat16, "NT", device)
        launch = Product(a, b, torch.empty(64, 64 * tiles, dtype=torch.bfloat16, device=device), "native")
        assert all((c in launch.candidates()) == offered for c in narrow), tiles


def test_tuner_offers_the_one_row_kernel_to_one_row_products(device):
    """One row with B contiguous along K (x @ W.T): the one-row kernel's configs join the candidates,
    on the pointer path (never TMA), and the heuristic takes it; B along N, or two rows: none. The
    one-row configs launch once and never split."""
    sms = devices.facts(torch.device(device)).num_sms
    for layout, k_contiguous in (("NT", True), ("NN", False)):
        a, b = operands(1, 64 * sms, 4096, torch.bfloat16, layout, device)
        launch = Product(a, b, torch.empty(1, 64 * sms, dtype=torch.bfloat16, device=device), "native")
        gemvs = [c for c in launch.candidates() if config_space.is_gemv(c)]
        assert launch.path == "pointer" and gemvs == (config_space.gemv_space() if k_contiguous else [])
        assert all(launch.launches(c) == 1 and launch.split(c) == 1 for c in config_space.gemv_space())
        assert config_space.is_gemv(launch.heuristic()) == k_contiguous
    a, b = operands(2, 64 * sms, 4096, torch.bfloat16, "NT", device)
    launch = Product(a, b, torch.empty(2, 64 * sms, dtype=torch.bfloat16, device=device), "native")
    assert not any(config_space.is_gemv(c) for c in launch.candidates() + [launch.heuristic()])


def test_one_row_kernel_reads_the_callers_tensors(device):
    """A product whose path stages operands (here TF32's K-major copy of B) runs the one-row kernel on
    the caller's a, b and out as they are."""
    a, b = operands(1, 40, 96, torch.float32, "NN", device)
    out = torch.full((1, 40), float("nan"), device=device)
    launch = Product(a, b, out, "tf32")
    cfg = config_space.gemv_space()[0]
    assert launch.staged and launch.b is not b
    (_, _, args, _, _), = launch.steps(cfg)
    assert [t.data_ptr() for t in args[:3]] == [a.data_ptr(), b.data_ptr(), out.data_ptr()]
    launch.run(cfg)
    assert rel_err(out, a, b) < 1e-5  # fp32 sums on the FMA units: exact as IEEE, whatever TF32 allows
    # Offered by B's contiguity as the caller gave it (here along N), not the staged copy's (along K)
    assert launch.b.stride(0) == 1 and not any(config_space.is_gemv(c) for c in launch.candidates())
    assert not config_space.is_gemv(launch.heuristic())


def test_alignment_hints_from_strides_and_sizes():
    """gemm_kernel's hints: VEC, the power of two (up to 16 bytes) dividing every non-unit stride;
    DIV, the one dividing each size; none while tracing. The tuning key tells narrow reads apart."""
    x = torch.empty(6, 5938, dtype=torch.bfloat16)[:, :3242]  # rows 4 bytes apart
    assert tritonmm.layout.vec(x) == 2 and tritonmm.layout.vec(x.T) == 2 and tritonmm.layout.vec(torch.empty(6, 4101)) == 1
    assert tritonmm.layout.vec(torch.empty(3, 8, 12, dtype=torch.float16)) == 4
    batch = torch.empty(400, dtype=torch.bfloat16).as_strided((3, 8, 16), (130, 16, 1))
    assert tritonmm.layout.vec(batch) == 2  # the batch stride counts: 130 = 2 * 65
    assert tritonmm.layout.vec(torch.empty(1, 4097, dtype=torch.bfloat16)[:, :4096]) == 1  # a size-1 dim's stride too
    assert tritonmm.layout.vec(torch.empty(8, 16, dtype=torch.bfloat16).expand(3, 8, 16)) == 8  # a batch stride of 0
    batch_innermost = torch.empty(8 * 3 * 16, dtype=torch.bfloat16).as_strided((8, 3, 16), (1, 128, 8))
    assert tritonmm.layout.vec(batch_innermost) == 1  # a batch stride of 1: z * 1 is no multiple of 8
    assert tritonmm.layout.vec(torch.empty(4, 20)) == 4 and tritonmm.layout.vec(torch.empty(4, 64, dtype=torch.float8_e4m3fn)) == 16
    hints = tritonmm.layout.alignment(x.unsqueeze(0), x.T.unsqueeze(0), torch.empty(1, 6, 6), 6, 6, 3242)
    assert hints == dict(VEC_A=2, VEC_B=2, VEC_C=2, DIV_M=2, DIV_N=2, DIV_K=2)  # C: fp32 rows 24 bytes apart
    aligned = torch.empty(1, 64, 64, dtype=torch.bfloat16)  # Triton's specialization says it all: no hints
    assert tritonmm.layout.alignment(aligned, aligned, aligned, 64, 64, 64) == dict(VEC_A=0, VEC_B=0, VEC_C=0, DIV_M=1,
                                                                          DIV_N=1, DIV_K=1)
    rows_16_bytes_apart = torch.empty(8, 4104, dtype=torch.bfloat16)  # 4104 = 8 * 513: not divisible by 16
    assert tritonmm.layout.alignment(rows_16_bytes_apart, aligned, aligned, 8, 64, 4104)["VEC_A"] == 8
    assert set(tritonmm.layout.alignment(x, x, x, 6, 6, 3242, traced=True).values()) <= {0, 1}
    assert tritonmm.layout.load_bytes(x, 2) == 4 and tritonmm.layout.load_bytes(x[:, :3241], 2) == 2  # the mask along the row too
    assert tritonmm.layout.load_bytes(torch.empty(4, 64)[:, 1:], 4) == 4  # an unaligned base: one element at a time
    launch = Product(x, x.T, torch.empty(6, 6, dtype=torch.bfloat16), "native")
    assert launch.path == "pointer" and launch.loads == "@4.4" and "NT@4.4" in launch.cache_key()
    aligned = torch.empty(6, 64, dtype=torch.bfloat16)
    assert Product(aligned, aligned.T, torch.empty(6, 6, dtype=torch.bfloat16), "native").loads == ""


ALIGN_CASES = ["rows 2 bytes apart", "rows 4 bytes apart", "rows 8 bytes apart", "transposed", "batched",
               "odd base", "broadcast batch"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("case", ALIGN_CASES)
def test_pointer_kernel_under_each_alignment_hint(case, dtype, device, pointer):
    """Views whose rows start 2, 4 or 8 bytes apart (16 bytes being the aligned case), transposed,
    batched with a batch stride of that alignment or 0, or on an odd base, through the pointer kernel
    and its hints, against float64; C written through a view of the same alignment. A wrong hint reads
    misaligned vectors on the GPU."""
    size = torch.tensor([], dtype=dtype).element_size()
    apart = {"rows 2 bytes apart": 2, "rows 8 bytes apart": 8}.get(case, 4)
    if apart < size:
        pytest.skip(f"{dtype} rows are at least {size} bytes apart")
    per_row = 16 // size  # elements in 16 bytes

    def view(rows, cols, z=None):
        """(rows, cols) or (z, rows, cols) in a buffer whose rows start `apart` bytes apart modulo 16."""
        stride = cols + (apart // size - cols) % per_row
        assert stride * size % 16 == apart % 16
        t = torch.randn((z or 1) * rows * stride + per_row, device=device).to(dtype)
        if z is None:
            return t[:rows * stride].view(rows, stride)[:, :cols]
        return t[:z * rows * stride].view(z, rows, stride)[:, :, :cols]
    M, N, K = 37, 70, 98
    if case in ("batched", "broadcast batch"):
        a, b, out = view(M, K, z=3), view(K, N, z=3), view(M, N, z=3)
        if case == "broadcast batch":
            b = b[:1].expand(3, K, N)
    else:
        a, b, out = view(M, K), view(K, N), view(M, N)
        if case == "transposed":
            a, b = view(K, M).T, view(N, K).T
        if case == "odd base":
            a, b = view(M + 1, K)[1:], view(K + 1, N)[1:]
    out.fill_(float("nan"))
    launch = Product(a, b, out, tritonmm.precision.resolve_precision(dtype, "ieee"))
    assert launch.constants["VEC_A"] == launch.constants["VEC_B"] == apart // size
    assert launch.args[0].stride(0) == 0 or a.dim() == 3  # no odd batch stride hides the alignment
    cfg = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, num_warps=4, num_stages=3)
    result = tritonmm.matmul(a, b, out=out, config=cfg, input_precision="ieee" if size == 4 else None)
    ref = a.double() @ b.double()
    assert result is out and ((out.double() - ref).norm() / ref.norm()).item() < BOUND[dtype]


@pytest.fixture(params=["64x64", "32x32"])
def copy_tile(request, monkeypatch):
    """Runs a copy test on each of copy_kernel's tiles (thresholds.TABLE["sm90"].copy_block, COPY_SMALL_BLOCK), whatever the copy's size."""
    monkeypatch.setitem(thresholds.OVERRIDES, "copy_min_programs_per_sm", 0 if request.param == "64x64" else 10 ** 9)
    return request.param


class _Recorder:
    """Stands in for launching.launcher's result: records ``entry(kernel, grid, kwargs)`` for each launch, and launches
    through ``launch`` (launching.launcher's own result) where one is given; else nothing runs."""

    def __init__(self, kernel, record, entry, launch=None):
        self.kernel, self.record, self.entry, self.launch = kernel, record, entry, launch

    def __getitem__(self, grid):
        def run(*args, **kwargs):
            self.record.append(self.entry(self.kernel, grid, kwargs))
            return None if self.launch is None else self.launch[grid](*args, **kwargs)
        return run


def test_copy_takes_small_tiles_where_large_ones_leave_sms_few_programs(device, monkeypatch):
    """copy_kernel's tile: 64x64 where that gives the copy (both of a pair) at least COPY_MIN_PROGRAMS_PER_SM
    programs an SM, 32x32 below; a relaunch from the cache keeps the tile it was launched with."""
    launches = []
    real = launching.launcher
    monkeypatch.setattr(launching, "launcher", lambda kernel, traced: _Recorder(
        kernel, launches, lambda kernel, grid, kwargs: (grid[0], kwargs["BLOCK"]), real(kernel, traced)))
    sms = devices.facts(torch.device(device)).num_sms
    monkeypatch.setitem(thresholds.OVERRIDES, "copy_min_programs_per_sm", 3)
    x = torch.randn(64 * 2, 64 * sms + 5, device=device).bfloat16()  # 2 x (sms + 1) tiles of 64: under 3 an SM
    y = tritonmm.staging.aligned_copy(x)
    x2 = torch.randn(64 * 2, 64 * sms - 7, device=device).bfloat16()  # the pair: 4 * sms tiles of 64
    y2 = tritonmm.staging.aligned_like(x2)
    y1 = tritonmm.staging.aligned_like(x)
    tritonmm.staging.copy(x, y1, pair=(x2, y2))
    assert launches == [(2 * 2 * (2 * sms + 1), 32), (4 * sms + 2, 64)]
    assert torch.equal(y, x) and torch.equal(y1, x) and torch.equal(y2, x2)
    again = tritonmm.staging.aligned_like(x).fill_(float("nan"))  # on a GPU, relaunched from the cache
    assert torch.equal(tritonmm.staging.copy(x, again), x)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_copies_of_unaligned_rows(dtype, device, copy_tile):
    """The staging copies, exact: unaligned rows into an aligned buffer and back into a NaN-filled one,
    an odd base, a transposing copy; inner tiles (unmasked) and edge tiles (masked) both."""
    x = torch.randn(67, 131, device=device).to(dtype)
    staged = tritonmm.staging.aligned_copy(x)
    assert torch.equal(staged, x) and staged.stride(0) % tritonmm.staging.row_pad(staged) == 0
    assert staged.stride(0) * staged.element_size() % 16 == 0
    back = torch.full((67, 131), float("nan"), device=device).to(dtype)
    assert torch.equal(tritonmm.staging.copy(staged, back), x)
    offset = torch.randn(67 * 128 + 1, device=device).to(dtype)[1:].view(67, 128)  # aligned stride, odd base
    assert offset.data_ptr() % 16 and torch.equal(tritonmm.staging.aligned_copy(offset), offset)
    assert torch.equal(tritonmm.staging.transpose(x), x.T)


def test_both_operands_staged_in_one_launch(device, monkeypatch, copy_tile):
    """Two unaligned operands are copied by one launch (copy_kernel's PAIR): a row-major A and a
    transposed view B of other shapes, each exact in an aligned buffer of its own orientation."""
    launched = []
    real = launching.launcher
    monkeypatch.setattr(launching, "launcher",
                        lambda kernel, traced: launched.append(kernel.__name__) or real(kernel, traced))
    tritonmm.staging._copy_launches.clear()
    a = torch.randn(67, 131, device=device).bfloat16()
    b = torch.randn(45, 131, device=device).bfloat16().T  # (131, 45), K-major, rows of 131
    sa, sb = tritonmm.staging.stage([tritonmm.staging.aligned_copy, tritonmm.staging.aligned_copy], a, b)
    assert launched == ["copy_kernel"]
    assert torch.equal(sa, a) and torch.equal(sb, b) and sa.data_ptr() != a.data_ptr() != sb.data_ptr()
    assert sa.stride(0) % tritonmm.staging.row_pad(sa) == 0 and sb.stride(1) % tritonmm.staging.row_pad(sb) == 0 and sb.stride(0) == 1
    ya, yb = (torch.full(t.shape, float("nan"), device=device).bfloat16() for t in (a, b))
    assert tritonmm.staging.copy(sa, ya, pair=(sb, yb)) is ya and torch.equal(ya, a) and torch.equal(yb, b)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_copy_into_a_larger_buffer_pads_with_zeros(dtype, device, copy_tile):
    """copy(x, y) with y larger than x along either dim: x in y's corner, 0 elsewhere (y starts NaN), for
    a plain, a transposing and a paired copy; inner tiles (unmasked) and edge and padding tiles both."""
    x = torch.randn(67, 131, device=device).to(dtype)
    for y in (torch.full((70, 200), float("nan"), device=device).to(dtype),
              torch.full((200, 70), float("nan"), device=device).to(dtype).T):
        assert tritonmm.staging.copy(x, y) is y and torch.equal(y[:67, :131], x)
        assert not y[67:].any() and not y[:, 131:].any()
    x2 = torch.randn(45, 9, device=device).to(dtype).T  # (9, 45), transposed
    ya, yb = (torch.full(shape, float("nan"), device=device).to(dtype) for shape in ((67, 136), (16, 45)))
    tritonmm.staging.copy(x, ya, pair=(x2, yb))
    assert torch.equal(ya[:, :131], x) and not ya[:, 131:].any() and torch.equal(yb[:9], x2) and not yb[9:].any()
    with pytest.raises(AssertionError):
        tritonmm.staging.copy(x, torch.empty(66, 131, device=device).to(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_padded_operands_are_k_major_with_k_a_multiple_of_16_bytes(dtype, device):
    """The pointer kernel's staged operands: K-major, 16-byte aligned rows, K padded to 16 bytes with zeros."""
    per = 16 // dtype.itemsize
    for layout in ("NN", "TT"):
        a, b = operands(37, 21, 2 * per + 3, dtype, layout, device)
        pa, pb = tritonmm.staging.stage([tritonmm.staging.padded_a_copy, tritonmm.staging.padded_b_copy], a, b)
        K = 3 * per
        assert pa.shape == (37, K) and pb.shape == (K, 21) and pa.stride(1) == 1 and pb.stride(0) == 1
        assert pa.stride(0) % tritonmm.staging.row_pad(pa) == 0 and pb.stride(1) % tritonmm.staging.row_pad(pb) == 0
        assert torch.equal(pa[:, :a.shape[1]], a) and torch.equal(pb[:a.shape[1]], b)
        assert not pa[:, a.shape[1]:].any() and not pb[a.shape[1]:].any()


@pytest.fixture
def pointer_staging(monkeypatch):
    every_product_staged_for_pointer(monkeypatch)


POINTER_UNALIGNED = [(33, 65, 31), (64, 61, 67), (2, 7, 9), (130, 100, 3), (19, 40, 40)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", POINTER_UNALIGNED, ids=lambda s: "x".join(map(str, s)))
def test_pointer_staged_operands(shape, layout, dtype, device, pointer_staging):
    """16-bit operands the pointer kernel would read narrower than 16 bytes run from K-major copies with K
    padded, one config and one split over K (its fp32 partial sums of the padded K); float32 ones as they
    are; the caller's tensors are read, never written."""
    M, N, K = shape
    a, b = operands(M, N, K, dtype, layout, device)
    a_before, b_before = a.clone(), b.clone()
    precision = "ieee" if dtype == torch.float32 else "native"
    out = nan_out(M, N, dtype, device)
    launch = Product(a, b, out, precision)
    widths = [tritonmm.layout.load_bytes(t, tritonmm.layout.vec_hint(t)) for t in (a, b)]
    assert launch.path == "pointer" and launch.staged == (min(widths) < 16 and dtype.itemsize == 2)
    if launch.staged:
        assert launch.loads == "" and launch.layout == "".join(
            "NT"[i] if staged else tritonmm.layout.layout(t) for i, (staged, t) in enumerate(zip(launch.stagers, (a, b))))
        assert launch.args[8] % (16 // dtype.itemsize) == 0  # K, padded where it was not
    for cfg in (launch.heuristic(), config_space.make_config(16, 16, 16, 2, 4, SPLIT_K=2)):
        out.fill_(float("nan"))
        launch.run(cfg)
        assert rel_err(out, a, b) < BOUND[dtype]
    assert torch.equal(a, a_before) and torch.equal(b, b_before)
    out = nan_out(M, N, dtype, device)
    assert rel_err(tritonmm.mm(a, b, out=out, input_precision="ieee" if dtype == torch.float32 else None), a, b) \
        < BOUND[dtype]


def test_pointer_staging_rule(device, monkeypatch):
    """Which operands the pointer kernel's staging copies (Product._pointer_stagers): the narrow ones, both
    where K is padded; none for aligned operands, batches, one row, float32, above POINTER_STAGE_MAX_LOAD_BYTES,
    4-byte reads whose copies do not pay (neither small nor intense enough), or eagerly below
    STAGE_EAGER_MIN_MACS (a captured product stages)."""
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    A, B = tritonmm.staging.padded_a_copy, tritonmm.staging.padded_b_copy

    def stagers(a, b, captured=True):
        out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=device)
        return Product(a, b, out, "native", captured=captured).stagers

    bf = torch.bfloat16
    aligned = operands(40, 48, 64, bf, "NT", device)
    assert stagers(*aligned) == [None, None]
    assert stagers(*operands(40, 48, 67, bf, "NT", device)) == [A, B]  # K padded: both
    assert stagers(*operands(40, 48, 67, bf, "TN", device)) == [None, None]  # K strided: its size splits no run
    assert stagers(*operands(41, 48, 67, bf, "TN", device)) == [A, B]  # narrow along M, so K padded: both
    assert stagers(*operands(41, 48, 64, bf, "TN", device)) == [A, None]
    wide = torch.randn(40, 72, device=device).to(bf)[:, 1:65]  # rows 144 bytes apart, base 2 bytes off
    assert stagers(wide, aligned[1]) == [A, None]  # K of 64: only the narrow operand
    assert stagers(*operands(1, 48, 67, bf, "NN", device)) == [None, None]  # one row: the one-row kernel's
    assert stagers(*operands(40, 48, 67, bf, "NT", device), captured=False) == [None, None]  # eager, small
    za, zb = torch.randn(2, 40, 67, device=device).to(bf), torch.randn(2, 67, 48, device=device).to(bf)
    assert stagers(za, zb) == [None, None]  # batched
    four = operands(40, 48, 66, bf, "NT", device)  # rows 4 bytes apart: staged where the copies pay
    assert stagers(*four) == [A, B]  # small copies
    assert stagers(*operands(40, 48, 67, torch.float32, "NT", device)) == [None, None]  # not 16-bit (4-byte reads)
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_small_bytes", 0)  # 40*48*66 multiply-adds, 2*(40+48)*66*2 bytes moved:
    assert stagers(*four) == [None, None]  # 5.45 per byte, under POINTER_STAGE_MIN_MACS_PER_BYTE
    assert stagers(*operands(40, 48, 67, bf, "NT", device)) == [A, B]  # 2-byte reads: always
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_min_macs_per_byte", 5.4)
    assert stagers(*four) == [A, B]
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_min_macs_per_byte", 5.5)
    assert stagers(*four) == [None, None]
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 2)
    assert stagers(*four) == [None, None] and stagers(*operands(40, 48, 67, bf, "NT", device)) == [A, B]
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 0)
    assert stagers(*operands(40, 48, 67, bf, "NT", device)) == [None, None]
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 8)
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_small_bytes", 2 ** 22)
    eager = Product(*four, torch.empty(40, 48, dtype=bf, device=device), "native")
    assert not eager.staged and eager.differs_when_captured and eager.loads == "@4.4"


@pytest.mark.gpu
def test_gpu_copy_of_more_than_65535_column_tiles():
    """A copy wider than 65535 tiles of 64 (a K-major copy of a row-major B has K columns): the copy's
    grid has one axis, since a grid's second stops at 65535."""
    x = torch.randn(3, 64 * 65535 + 5, device="cuda")
    assert torch.equal(tritonmm.staging.aligned_copy(x), x) and torch.equal(tritonmm.staging.transpose(x.T), x)


def test_tuning_ranks_split_k_against_its_host_time(device, pointer, monkeypatch, tmp_path):
    """Graph-timed, split-K's second launch is free; an eager call pays its host time. A split
    config faster on the device by less than that loses to one launch; one faster by more wins;
    eagerly timed (host time included) the faster one wins."""
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    a, b = operands(1, 64, 4096, torch.float16, "NT", device)
    launch = Product(a, b, torch.empty(1, 64, dtype=torch.float16, device=device), "native")
    one = config_space.make_config(16, 64, 128, 4, 4)
    split = config_space.make_config(16, 64, 128, 4, 4, SPLIT_K=4)
    assert launch.launches(one) == 1 and launch.launches(split) == 2
    monkeypatch.setattr(launch, "candidates", lambda: [one, split])
    monkeypatch.setattr(launch, "heuristic", lambda: one)  # the default among them: tune() adds no third
    th = thresholds.TABLE["sm90"]
    host_ms = (th.host_us_per_call + th.host_us_per_launch) * 1e-3  # one launch's host time
    for split_ms, single_ms, graph, winner in (
            (host_ms, host_ms + 0.0007, True, one),  # 0.7 us of device time for 8 us of host time
            (3 * host_ms, 4 * host_ms, True, split),  # device-bound: the faster kernel
            (host_ms, host_ms + 0.0007, False, split)):  # eager timings carry their host time
        times = {one: single_ms, split: split_ms}

        def fake(product, candidates, graph_timed, progress, graph=graph, times=times):
            if graph_timed != graph:
                raise RuntimeError("capture failed")  # the fallback to eager timing
            return {c: times[c] for c in candidates}
        monkeypatch.setattr(tuning, "_time_all", fake)
        assert tuning.tune(launch)[0] == winner
    # A plan only CUDA graphs run pays no host time: the faster kernel, by however little.
    monkeypatch.setattr(launch, "graph_only", True)
    monkeypatch.setattr(tuning, "_time_all", lambda product, candidates, graph_timed, progress:
                        {one: host_ms + 0.0007, split: host_ms})
    assert tuning.tune(launch)[0] == split


def test_graph_only_plans_key_apart(device, monkeypatch):
    """A captured plan the eager call of the same product would not run (staged operands for the pointer
    kernel here) is graph_only, and keys its tuning apart; captured plans equal to the eager one are not."""
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    bf = torch.bfloat16

    def product(a, b, captured):
        return Product(a, b, torch.empty(a.shape[0], b.shape[1], dtype=bf, device=device), "native", captured=captured)
    narrow = operands(40, 48, 67, bf, "NT", device)  # 2-byte reads: staged inside capture only
    eager, captured = product(*narrow, False), product(*narrow, True)
    assert captured.staged and captured.graph_only and not eager.graph_only
    assert "~graph" in captured.cache_key()
    # An eager product of aligned operands in the same bucket (K 80: a partial last step of 64, as K 67)
    # would share the staged plan's key but for the tag: it pays host time, the graph does not.
    aligned_80 = product(*operands(40, 48, 80, bf, "NT", device), False)
    assert captured.tuning_key != aligned_80.tuning_key
    monkeypatch.setattr(captured, "graph_only", False)
    assert captured.tuning_key == aligned_80.tuning_key
    aligned = operands(40, 48, 64, bf, "NT", device)
    assert product(*aligned, True).tuning_key == product(*aligned, False).tuning_key
    assert not product(*aligned, True).graph_only
    # Staged eagerly too (from STAGE_EAGER_MIN_MACS): the same plan both ways, sharing its tuning.
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_eager_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_eager_native_min_macs", 0)
    assert product(*narrow, False).staged and not product(*narrow, True).graph_only


def test_batches_key_apart_by_their_entries(device):
    """A batch's tuning keys hold its entry count (config_space.batch_bucket): the defaults' rules read it (a batch's
    tiles fill the SMs or not), so a config tuned over 128 entries is not one for 8, nor one of a single product of
    the entries' shape (the pointer kernel's key spelled a batch's layout as an unbatched one's). Counts in one
    bucket share."""
    bf = torch.bfloat16

    def plan(Z):
        a, b = (torch.randn(Z, 48, 40, device=device).to(bf), torch.randn(Z, 40, 56, device=device).to(bf))
        return Product(a, b, torch.full((Z, 48, 56), float("nan"), dtype=bf, device=device), "native")
    few, many, near = plan(8), plan(128), plan(100)
    one = Product(*operands(48, 56, 40, bf, "NN", device), torch.empty(48, 56, dtype=bf, device=device), "native")
    assert one.path == few.path == "pointer" and one.tuning_key != few.tuning_key  # nor with its entries unbatched
    assert few.tuning_key != many.tuning_key and few.cache_key() != many.cache_key()
    assert near.tuning_key == many.tuning_key and near.cache_key() == many.cache_key()
    assert [config_space.batch_bucket(z) for z in (1, 2, 3, 5, 8, 9, 100)] == [1, 2, 3, 6, 8, 12, 128]


@pytest.mark.gpu
def test_gpu_graph_only_tma_plan(monkeypatch):
    """A product under the eager TMA bar and above the captured one runs on the TMA kernel only inside
    capture: that plan is graph_only; above both bars the captured plan is the eager one."""
    if not devices.facts(torch.device("cuda")).tma:
        pytest.skip("TMA needs Hopper")
    monkeypatch.setitem(thresholds.OVERRIDES, "few_tiles_per_sm", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 2 ** 22)  # captured: from 2**19
    a, b = operands(128, 128, 128, torch.bfloat16, "NN", "cuda")  # 2**21 multiply-adds
    out = torch.empty(128, 128, dtype=torch.bfloat16, device="cuda")
    eager, captured = Product(a, b, out, "native"), Product(a, b, out, "native", captured=True)
    assert eager.path == "pointer" and captured.path == "tma" and captured.graph_only and not eager.graph_only
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", 2 ** 20)
    both = Product(a, b, out, "native", captured=True)
    assert both.path == "tma" and not both.graph_only


def test_bad_split_k_is_refused(device):
    a = torch.randn(4, 4, device=device)
    with pytest.raises(ValueError, match="SPLIT_K"):
        tritonmm.mm(a, a, config=dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=0))
    with pytest.raises(ValueError, match="at most 16"):
        tritonmm.mm(a, a, config=dict(BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, SPLIT_K=64))


@pytest.fixture
def staging(monkeypatch, device):
    """Every product on the TMA path, staging whatever TMA cannot read, however small."""
    if not devices.facts(torch.device(device)).tma:
        pytest.skip("TMA needs Hopper")
    every_product_on_tma(monkeypatch)


UNALIGNED = [(33, 65, 31), (64, 61, 67), (1, 7, 9), (130, 100, 3)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("shape", UNALIGNED, ids=lambda s: "x".join(map(str, s)))
def test_staged_operands(shape, layout, dtype, device, staging):
    """Unaligned operands run on the TMA kernel through aligned copies; the caller's tensors
    are read, never written, and never used as the staging buffers."""
    a, b = operands(*shape, dtype, layout, device)
    a_before, b_before = a.clone(), b.clone()
    out = nan_out(shape[0], shape[1], dtype, device)
    precision = "ieee" if dtype == torch.float32 else "native"
    launch = Product(a, b, out, precision)
    assert launch.path == "tma" and launch.staged
    ours = {t.untyped_storage().data_ptr() for t in (a, b, out)}
    for used, given in ((launch.a, a), (launch.b, b)):
        assert used is given or used.untyped_storage().data_ptr() not in ours
    launch.run(launch.heuristic())
    assert rel_err(out, a, b) < BOUND[dtype]
    assert torch.equal(a, a_before) and torch.equal(b, b_before)


def test_tall_tile_is_timed_on_the_tma_kernel_where_n_leaves_wide_tiles_empty(device, staging, monkeypatch):
    """The tuner times 256x128 (config_space.TUNED_TMA_ONLY) on the TMA kernel where N's last 256-wide column
    would be at most half full (272), not where 128-wide tiles pad N as much (512), nor on the pointer kernel;
    the key says which ('+t'), since N's bucket holds both kinds (640 and 700 share one)."""
    tall = config_space.make_config(256, 128, 64, 4, 8)

    def timed(N, path="tma"):
        launch = Product(*operands(600, N, 64, torch.bfloat16, "NN", device), nan_out(600, N, torch.bfloat16, device),
                         "native")
        assert launch.path == path and (tall in launch.candidates()) == ("+t" in launch.cache_key())
        return tall in launch.candidates()
    assert timed(272) and timed(640) and not timed(700) and not timed(512)
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    assert not timed(272, "pointer")


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
def test_tma_kernel_stores_through_pointers_where_tma_cannot(dtype, device, staging):
    """The TMA kernel writes out through its descriptor where out's rows are 16-byte aligned and row-major,
    else through pointers (C_DESC false: a column-major view, rows of odd length, a base 2 bytes off),
    into out itself with nothing staged; the key tells the two apart."""
    precision = "ieee" if dtype == torch.float32 else "native"
    launch = Product(*operands(40, 24, 32, dtype, "NN", device), nan_out(40, 24, dtype, device), precision)
    assert launch.path == "tma" and launch.constants["C_DESC"] and "+c" not in launch.cache_key()
    off = torch.full((40 * 24 + 8,), float("nan"), dtype=dtype, device=device)[1:1 + 40 * 24].view(40, 24)
    # rows 16-byte aligned apart but ending inside a 16-byte chunk: TMA would store the chunk whole (triton#11583)
    wide = torch.full((40, 32), float("nan"), dtype=dtype, device=device)
    for M, N, out in ((40, 24, nan_out(24, 40, dtype, device).T), (40, 23, nan_out(40, 23, dtype, device)),
                      (40, 24, off), (40, 23, wide[:, :23])):
        a, b = operands(M, N, 32, dtype, "NN", device)
        launch = Product(a, b, out, precision)
        assert launch.path == "tma" and not launch.constants["C_DESC"] and "+c" in launch.cache_key()
        assert launch.staged == (N * dtype.itemsize % 16 != 0)  # B's rows as unaligned as C's: only B is copied
        launch.run(launch.heuristic())
        assert rel_err(out, a, b) < BOUND[dtype]
    assert torch.isnan(wide[:, 23:]).all()  # nothing past out's rows was written
    x, w, bias = torch.randn(5, 33, device=device), torch.randn(7, 33, device=device), torch.randn(7, device=device)
    y = tritonmm.linear(x, w, bias, "gelu", input_precision="ieee")
    ref = linear_ref(x, w, bias, "gelu")
    assert ((y.double() - ref).norm() / ref.norm()) < 1e-5


def _tail_shape(sms):
    """M x 256 x 40 with one wave of 128x128 tiles and 6 tiles over: rows [0, 64 * sms) and the rest."""
    return 128 * (sms // 2 + 3) - 37, 256, 40


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_gpu_wave_tail_split(layout, dtype, staging, monkeypatch, tmp_path):
    """A TAIL config runs the whole waves' rows and the rest in two launches (A and C as row views,
    staged where TMA cannot read them), planned and then relaunched from the cache."""
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    sms = devices.facts(torch.device("cuda")).num_sms
    M, N, K = _tail_shape(sms)
    a, b = operands(M, N, K, dtype, layout, "cuda")
    out = nan_out(M, N, dtype, "cuda")
    cfg = config_space.make_config(128, 128, 64, 3, 4, TAIL=1)
    launch = Product(a, b, out, "native")
    assert launch.path == "tma" and launch.tail_rows(cfg) == sms // 2 * 128 and launch.launches(cfg) == 2
    tuning._remember(launch.tuning_key, cfg)
    try:
        for _ in range(2):  # planned, then relaunched (relaunch.launch slices the rows again)
            out.fill_(float("nan"))
            tritonmm.mm(a, b, out=out)
            assert rel_err(out, a, b) < BOUND[dtype]
    finally:
        tuning.forget()


def _planned_then_relaunched(cfg, a, b, out, reference, bound, **kw):
    """planner.product into out under cfg twice: planned, then relaunched from the cache, whose launches take their
    rows at offsets (relaunch.Entry.offsets) of A, C, a bias that varies by row and A's scales."""
    from tritonmm import fast_launch, tuning
    plan = Product(a, b, out, "native", **kw)
    assert plan.tail_rows(cfg)
    tuning._remember(plan.tuning_key, cfg)
    try:
        for _ in range(2):
            out.fill_(float("nan"))
            planner.product(a, b, precision="native", out=out, **kw)
            assert ((out.double() - reference).norm() / reference.norm()) < bound
        # keyed under this tuning generation: looked up before forget() starts another
        entry = relaunch.cached(relaunch.key(a, b, out, kw.get("bias"), kw.get("activation", "none"), "native",
                                             kw.get("scales", (None, None))))
        assert not fast_launch.enabled() or len(entry.offsets) == plan.launches(cfg)
    finally:
        tuning.forget()


@pytest.mark.gpu
@pytest.mark.parametrize("tail", ["128-row tiles", "64-row tiles"])
@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
def test_gpu_wave_tail_in_slices_of_k(layout, tail):
    """A wave-tail split whose last rows run in slices of K (design.md: tail-slices): the head's launch, the slices'
    and their sum, with a bias that varies by row and an activation, planned and then relaunched from the cache
    (three launches at their rows' offsets); a tail of 347 rows on 128-row tiles (M odd: A's rows staged in TN and TT),
    one of 40 on 64-row ones."""
    sms = devices.facts(torch.device("cuda")).num_sms
    (M, N, _), K = _tail_shape(sms), 4160
    M = M if tail == "128-row tiles" else 128 * (sms // 2) + 40
    a, b = operands(M, N, K, torch.bfloat16, layout, "cuda")
    cfg = config_space.make_config(128, 128, 64, 3, 4, TAIL=1)
    plan = Product(a, b, nan_out(M, N, torch.bfloat16, "cuda"), "native")
    rows = plan.tail_rows(cfg)
    assert plan.path == "tma" and plan.launches(cfg) == 3
    assert plan.tail_launch(M - rows) == ((splits.TAIL_SLICE_TILE if tail == "128-row tiles" else splits.TAIL_SLICE_NARROW),
                                          splits.TAIL_MAX_SLICES)
    bias = torch.randn(M, 1, device="cuda").bfloat16()
    ref = planner.epilogue_reference(a.double() @ b.double(), bias.double(), "relu")
    _planned_then_relaunched(cfg, a, b, nan_out(M, N, torch.bfloat16, "cuda"), ref, 1e-2, bias=bias,
                             activation="relu")


@pytest.mark.gpu
@pytest.mark.parametrize("bias_kind", ["row", "column", "matrix"])
def test_gpu_wave_tail_split_epilogues(bias_kind, staging):
    """Each launch of a wave-tail split takes its rows of a bias that varies by row, and of FP8 row scales, planned
    and relaunched."""
    sms = devices.facts(torch.device("cuda")).num_sms
    M, N, K = _tail_shape(sms)
    cfg = config_space.make_config(128, 128, 64, 3, 4, TAIL=1)
    bias = {"row": torch.randn(N), "column": torch.randn(M, 1), "matrix": torch.randn(M, N)}[bias_kind].cuda()
    a, b = operands(M, N, K, torch.float16, "NT", "cuda")
    ref = planner.epilogue_reference(a.double() @ b.double(), bias.half().double(), "gelu_tanh")
    _planned_then_relaunched(cfg, a, b, nan_out(M, N, torch.float16, "cuda"), ref, 2e-3, bias=bias.half(),
                             activation="gelu_tanh")
    if torch.cuda.get_device_capability() >= (8, 9):
        a8, b8 = (t.to(torch.float8_e4m3fn) for t in operands(M, N, 64, torch.float32, "NT", "cuda"))
        scale_a, scale_b = torch.rand(M, 1, device="cuda") + 0.5, torch.rand(1, N, device="cuda") + 0.5
        ref = planner.epilogue_reference((a8.double() * scale_a.double()) @ (b8.double() * scale_b.double()),
                                         bias.bfloat16().double(), "none")
        _planned_then_relaunched(cfg, a8, b8, nan_out(M, N, torch.bfloat16, "cuda"), ref, 1e-2,
                                 bias=bias.bfloat16(), scales=(scale_a, scale_b))


def test_path_rule():
    hopper = devices.DeviceFacts("h", 132, 232448, True)
    assert rules.tma_path(hopper, 4096, 4096, 4096, 0)
    assert not rules.tma_path(devices.DeviceFacts("a", 108, 166912, False), 4096, 4096, 4096, 0)
    assert not rules.tma_path(hopper, 64, 64, 64, 0)  # small: the pointer kernel
    assert not rules.tma_path(hopper, 1, 4096, 14336, 0)  # decode: few tiles, split-K
    assert rules.tma_path(hopper, 128, 4096, 14336, 0)  # 128 tiles of 64x64: TMA, as measured
    # 3000x3001x2999 bf16: staging A and B moves 72 MB for 27 G multiply-adds: worth it (C is stored through pointers)
    assert rules.tma_path(hopper, 3000, 2999, 3001, 2 * 2 * (3000 * 3001 + 3001 * 2999))
    # 1023x1025x1027 is below TMA_MIN_MACS, but unaligned: 1.1 G multiply-adds for 8.4 MB of copies,
    # worth it in a CUDA graph; an eager call would spend as long launching the copies as the pointer kernel
    # takes. 1500x1501x1499 (3.4 G) stages eagerly too (from STAGE_EAGER_MIN_MACS).
    staged = 2 * 2 * (1023 * 1027 + 1027 * 1025)
    assert rules.tma_path(hopper, 1023, 1025, 1027, staged, captured=True)
    assert not rules.tma_path(hopper, 1023, 1025, 1027, staged)
    assert rules.tma_path(hopper, 1500, 1501, 1499, 2 * 2 * (1500 * 1499 + 1499 * 1501))
    assert not rules.tma_path(hopper, 255, 257, 253, 2 * 2 * (255 * 253 + 253 * 257), captured=True)  # few tiles
    # 77x4099x2049 x @ W.T: 19 multiply-adds per byte the copies move, staged in a CUDA graph (29.4
    # against 30.2 us on the pointer kernel; design.md: staging-intensity); eagerly below STAGE_EAGER_MIN_MACS
    staged = 2 * 2 * (77 * 2049 + 2049 * 4099)
    assert rules.tma_path(hopper, 77, 4099, 2049, staged, captured=True)
    assert not rules.tma_path(hopper, 77, 4099, 2049, staged)
    assert not rules.tma_path(hopper, 77, 4099, 2049, 2 * staged, captured=True)  # 9.5 per byte
    # Rows 8-byte aligned (K of 4 mod 8): the pointer kernel reads 8 bytes at a time, and staging needs
    # STAGE_MIN_MACS_PER_BYTE_WIDE_READS. 3027x70x2332 x @ W.T: 17 per byte, staged on 2-byte reads only;
    # 700x3068x1500 x @ W.T: 142 per byte, staged either way.
    staged = 2 * 2 * (3027 * 2332 + 2332 * 70)
    assert rules.tma_path(hopper, 3027, 70, 2332, staged, captured=True, read_bytes=2)
    assert not rules.tma_path(hopper, 3027, 70, 2332, staged, captured=True, read_bytes=8)
    assert not rules.tma_path(hopper, 3027, 70, 2332, staged, captured=True, read_bytes=16)
    staged = 2 * 2 * (700 * 1500 + 1500 * 3068)
    assert rules.tma_path(hopper, 700, 3068, 1500, staged, captured=True, read_bytes=8)
    # 3027x70x2332 sits between the two bars
    macs_per_byte = 3027 * 70 * 2332 / (2 * 2 * (3027 * 2332 + 2332 * 70))
    assert thresholds.TABLE["sm90"].stage_min_macs_per_byte < macs_per_byte < thresholds.TABLE["sm90"].stage_min_macs_per_byte_wide_reads
    # Mid-size: the pointer kernel eagerly (host-bound), the TMA kernel inside a CUDA graph
    assert not rules.tma_path(hopper, 1024, 1024, 1024, 0)
    assert rules.tma_path(hopper, 1024, 1024, 1024, 0, captured=True)
    assert not rules.tma_path(hopper, 512, 512, 512, 0, captured=True)
    assert not rules.tma_path(hopper, 16, 4096, 4096, 0, captured=True)  # decode stays on split-K


def test_eager_bars_where_native_repeats_the_copies(device, monkeypatch):
    """Where native.cpp repeats a product's eager calls, copies included (``repeated``), eager calls stage from
    stage_eager_native_min_macs and realign from realign_eager_native_min_macs, else from Python's bars (design.md:
    native-staging)."""
    hopper = devices.DeviceFacts("h", 132, 232448, True)
    th = thresholds.TABLE["sm90"]
    staged = 2 * 2 * (1023 * 1027 + 1027 * 1025)  # 1023x1025x1027: 1.08e9 multiply-adds
    assert th.stage_eager_native_min_macs < 1023 * 1025 * 1027 < th.stage_eager_min_macs
    a = torch.randn(1023, 1027, device=device).bfloat16()
    b = torch.randn(1027, 1025, device=device).bfloat16()
    for repeated in (True, False):
        assert rules.tma_path(hopper, 1023, 1025, 1027, staged, repeated=repeated) == repeated
        assert any(rules.pointer_staging(hopper, a, b, 1023, 1025, 1027, False, repeated)) == repeated
        assert rules.eager_bars(th, repeated) == ((th.stage_eager_native_min_macs, th.realign_eager_native_min_macs)
                                                  if repeated else (th.stage_eager_min_macs, th.realign_eager_min_macs))
    small = 2 * 2 * (255 * 257 + 257 * 1025)  # 255x1025x257: 6.7e7 multiply-adds, below native's bar too
    assert not rules.tma_path(hopper, 255, 1025, 257, small, repeated=True)
    assert rules.tma_path(hopper, 255, 1025, 257, small, captured=True)
    # A Product learns it from its entry point (planner.product's served); its TMA launches only where describe
    # follows the launcher's descriptors (Triton 3.8-3.9)
    out = torch.empty(1023, 1025, dtype=torch.bfloat16, device=device)
    assert Product(a, b, out, "native").repeated == [False, False]
    for describes in (True, False):
        monkeypatch.setattr(native, "describes_descriptors", lambda d=describes: d)
        assert Product(a, b, out, "native", served=True).repeated == [True, describes]


@pytest.mark.parametrize("K, staged", [(2332, False), (2331, True)], ids=["8-byte rows", "2-byte rows"])
def test_wide_reads_raise_the_staging_bar(K, staged, device, monkeypatch):
    """3027x70xK x @ W.T in a CUDA graph on a Hopper (on the CPU a stand-in: the planner and the staging copies
    run in the interpreter), 17 multiply-adds per byte the copies would move: with rows 8 bytes apart the pointer
    kernel reads the caller's operands 8 bytes at a time and no copy is made (0.86x torch.mm
    against 0.73 staged; design.md: staging-wide-reads); 2 bytes apart, they are staged for the TMA kernel."""
    if device == "cpu":
        hopper = devices.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
        monkeypatch.setattr(devices, "facts", lambda d: hopper)
    elif not devices.facts(torch.device(device)).tma or devices.facts(torch.device(device)).num_sms < 64:
        pytest.skip("the rule's shape is measured against a Hopper's SM count")
    a, b = operands(3027, 70, K, torch.bfloat16, "NT", device)
    out = torch.empty(3027, 70, dtype=torch.bfloat16, device=device)
    launch = Product(a, b, out, "native", captured=True)
    assert launch._tma_bytes()[1] == (2 if staged else 8)
    expected = ("tma", True, True) if staged else ("pointer", False, False)
    assert (launch.path, launch.staged, launch.graph_only) == expected
    assert Product(a, b, out, "native").differs_when_captured == staged


@pytest.mark.gpu
def test_gpu_mid_size_product_takes_tma_in_a_graph(monkeypatch, tmp_path):
    """Between TMA_MIN_MACS / CAPTURED_TMA_DIVISOR and TMA_MIN_MACS a product runs on the pointer
    kernel eagerly and on the TMA kernel inside a CUDA graph, under a config its first eager call
    tuned (capture benchmarks nothing); the replayed result is right."""
    from tritonmm import timing, tuning
    if not devices.facts(torch.device("cuda")).tma:
        pytest.skip("TMA needs Hopper")
    a, b, out, eager, captured = _first_eager_call(monkeypatch, tmp_path, 1000, 1024, 1032)
    assert eager.path == "pointer" and eager.differs_when_captured
    assert captured.path == "tma" and captured.tuning_key in tuning._memory
    paths, run = [], Product.run
    monkeypatch.setattr(Product, "run", lambda self, cfg: paths.append(self.path) or run(self, cfg))
    calls = timing.calls
    graph = _captured(lambda: tritonmm.mm(a, b, out=out))  # its side-stream call relaunched: nothing planned
    assert paths == ["tma"] and timing.calls == calls
    _replays_right(graph, a, b, out)


def _first_eager_call(monkeypatch, tmp_path, M, N, K):
    """The first eager call of a bf16 x @ W.T product, tuning into an empty cache, checked: (a, b, out,
    the product's eager plan, its plan inside a CUDA graph)."""
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITONMM_AUTOTUNE", "1")
    tuning.forget()
    a, b = operands(M, N, K, torch.bfloat16, "NT", "cuda")
    out = nan_out(M, N, torch.bfloat16, "cuda")
    tritonmm.mm(a, b, out=out)
    assert rel_err(out, a, b) < BOUND[torch.bfloat16]
    return a, b, out, Product(a, b, out, "native"), Product(a, b, out, "native", captured=True)


def _captured(call):
    """A CUDA graph of call(), after one call on a side stream, as torch's documentation asks."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    return graph


def _replays_right(graph, a, b, out):
    """graph, which computes out = a @ b, replayed on new values in a and b into a NaN-filled out: right."""
    for t in (a, b):
        t.copy_(torch.randn(t.shape, device=t.device))
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert rel_err(out, a, b) < BOUND[a.dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["NT", "TN"])
def test_gpu_tma_split_k_relaunches_and_replays(layout, tma_kernel, monkeypatch, tmp_path):
    """A TMA split-K config as the tuner would leave it: planned, relaunched from the launch cache (a new
    workspace, both passes) and replayed from a CUDA graph, right on fresh inputs each time."""
    from tritonmm import tuning
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    M, N, K = 200, 320, 1000
    cfg = config_space.make_config(128, 128, 64, 3, 4, SPLIT_K=3)
    out = nan_out(M, N, torch.bfloat16, "cuda")
    a, b = operands(M, N, K, torch.bfloat16, layout, "cuda")
    launch = Product(a, b, out, "native")
    assert launch.path == "tma" and launch.split(cfg) == 3
    tuning._remember(launch.tuning_key, cfg)
    try:
        for _ in range(3):  # planned, then relaunched
            a, b = operands(M, N, K, torch.bfloat16, layout, "cuda")
            out.fill_(float("nan"))
            tritonmm.mm(a, b, out=out)
            assert rel_err(out, a, b) < BOUND[torch.bfloat16]
        _replays_right(_captured(lambda: tritonmm.mm(a, b, out=out)), a, b, out)
    finally:
        tuning.forget()


@pytest.mark.gpu
@pytest.mark.parametrize("bias_kind", ["row", "column", "matrix"])
def test_gpu_tma_split_k_epilogues(bias_kind, tma_kernel):
    """The second pass applies each bias kind and FP8 scales once, to the sum of the slices."""
    M, N, K = 200, 320, 1024
    cfg = config_space.make_config(128, 128, 64, 3, 4, SPLIT_K=4)
    bias = {"row": torch.randn(N), "column": torch.randn(M, 1), "matrix": torch.randn(M, N)}[bias_kind].cuda()
    a, b = operands(M, N, K, torch.float16, "NT", "cuda")
    out = nan_out(M, N, torch.float16, "cuda")
    launch = Product(a, b, out, "native", bias=bias.half(), activation="silu")
    assert launch.path == "tma" and launch.split(cfg) == 4
    launch.run(cfg)
    ref = planner.epilogue_reference(a.double() @ b.double(), bias.half().double(), "silu")
    assert ((out.double() - ref).norm() / ref.norm()) < 2e-3
    if torch.cuda.get_device_capability() >= (8, 9):
        cfg = config_space.make_config(128, 128, 128, 3, 4, SPLIT_K=4)
        a8, b8 = (t.to(torch.float8_e4m3fn) for t in operands(M, N, K, torch.float32, "NT", "cuda"))
        scale_a, scale_b = torch.rand(M, 1, device="cuda") + 0.5, torch.rand(1, N, device="cuda") + 0.5
        out = nan_out(M, N, torch.bfloat16, "cuda")
        launch = Product(a8, b8, out, "native", bias=bias.bfloat16(), scales=(scale_a, scale_b))
        assert launch.path == "tma" and launch.split(cfg) == 4
        launch.run(cfg)
        ref = planner.epilogue_reference((a8.double() * scale_a.double()) @ (b8.double() * scale_b.double()),
                                      bias.bfloat16().double(), "none")
        assert ((out.double() - ref).norm() / ref.norm()) < 1e-2


def test_relaunch_never_raises_on_bad_arguments(device):
    a = torch.randn(4, 4, device=device)
    for args in [("a", a), (a, [1, 2]), (a, a, "out"), (a, a, None, [1])]:
        assert relaunch.lookup(*args) is None
    assert relaunch.lookup(a, a, input_precision=["tf32"]) is None


@pytest.mark.gpu
def test_gpu_relaunched_calls_still_check_what_varies(monkeypatch):
    """A cached product launches before the checks; what its key does not fix is still
    checked: out= overlapping an input, and autograd (which goes through the operator)."""
    a, b = torch.randn(64, 48, device="cuda"), torch.randn(48, 64, device="cuda")
    out = torch.empty(64, 64, device="cuda")
    for _ in range(2):
        tritonmm.mm(a, b, out=out, input_precision="ieee")
    big = torch.randn(64, 64, device="cuda")
    with pytest.raises(ValueError, match="overlaps"):
        tritonmm.mm(big[:, :48], b, out=big, input_precision="ieee")  # same key as a fresh out
    za, zb = torch.randn(3, 64, 48, device="cuda"), torch.randn(3, 48, 64, device="cuda")
    for _ in range(2):
        tritonmm.matmul(za, zb, input_precision="ieee")
    with pytest.raises(ValueError, match="2-D"):
        tritonmm.mm(za, zb, input_precision="ieee")  # a batched product's key is matmul's, not mm's
    g = a.clone().requires_grad_()
    tritonmm.mm(g, b, input_precision="ieee").sum().backward()
    assert torch.allclose(g.grad, b.sum(1).expand(64, 48), atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 4096, 4096), (16, 2048, 14336), (64, 1024, 4096)])
def test_gpu_decode_shapes_split_and_relaunch(shape, monkeypatch):
    """Decode products take the pointer path, the one-row kernel for one row and otherwise, with tiles for
    less than half the SMs, split over K by the heuristic (design.md: few-row-default), and relaunch from the
    cache (split-K's workspace and both passes) with right results on fresh inputs."""
    M, N, K = shape
    for _ in range(3):
        a, b = operands(M, N, K, torch.bfloat16, "NT", "cuda")
        bias = torch.randn(N, device="cuda").bfloat16()
        y = tritonmm.linear(a, b.T, bias, "silu")
        ref = linear_ref(a, b.T, bias, "silu")
        assert ((y.double() - ref).norm() / ref.norm()) < 1e-2
    launch = Product(a, b, torch.empty(M, N, dtype=torch.bfloat16, device="cuda"), "native")
    chosen = launch.heuristic()
    assert launch.path == "pointer" and (config_space.is_gemv(chosen) if M == 1 else launch.split(chosen) > 1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, precision", [(torch.float16, None), (torch.bfloat16, None),
                                              (torch.float32, "ieee"), (torch.float32, "tf32x3")], ids=str)
def test_gpu_staged_products_relaunch_with_their_copies(dtype, precision, staging, monkeypatch):
    """A staged product is planned once; later calls repeat its copies from the launch cache and
    stay right on fresh inputs (unaligned A and B, a C that TMA cannot write, stored through pointers;
    tf32x3's operands split into TF32 parts)."""
    plans = []
    real = Product.__init__
    monkeypatch.setattr(Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    for _ in range(3):
        a, b = operands(67, 45, 33, dtype, "NT", "cuda")
        out = nan_out(67, 45, dtype, "cuda")
        tritonmm.mm(a, b, out=out, input_precision=precision)
        assert rel_err(out, a, b) < BOUND[dtype]
    assert len(plans) == 1


@pytest.mark.gpu
@pytest.mark.parametrize("dtype, precision", [(torch.bfloat16, None), (torch.float16, None)], ids=str)
@pytest.mark.parametrize("shape", [(67, 45, 333), (67, 45, 3333)], ids=lambda s: "x".join(map(str, s)))
def test_gpu_pointer_staged_products_relaunch_with_their_copies(shape, dtype, precision, monkeypatch):
    """A product staged for the pointer kernel (K padded) is planned once; later calls repeat its copies
    from the launch cache, one launch or split over K (long K, with the eager host floor off: design.md:
    default-host-floor), and stay right on fresh inputs."""
    every_product_staged_for_pointer(monkeypatch)
    plans = []
    real = Product.__init__
    monkeypatch.setattr(Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    with thresholds.override(default_host_floor=False):
        for _ in range(3):
            a, b = operands(*shape, dtype, "NT", "cuda")
            out = nan_out(*shape[:2], dtype, "cuda")
            tritonmm.mm(a, b, out=out, input_precision=precision)
            assert rel_err(out, a, b) < BOUND[dtype]
        assert len(plans) == 1
        launch = Product(a, b, out, precision or "native")
        assert launch.staged and launch.args[8] > shape[2]
        assert launch.split(launch.heuristic()) > 1 or shape[2] < 1000


@pytest.mark.gpu
def test_gpu_ieee_products_relaunch_and_replay_with_their_n_major_copy(monkeypatch):
    """design.md: ieee-n-major. An IEEE x @ W.T that reads B from an N-major copy is planned once eagerly (later calls
    repeat the copy from the launch cache) and replays right from a CUDA graph, on fresh inputs each time; a batch too."""
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_n_major_min_macs", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "ieee_n_major_eager_min_macs", 0)
    plans = []
    real = Product.__init__
    monkeypatch.setattr(Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    for _ in range(3):
        a, b = operands(67, 45, 33, torch.float32, "NT", "cuda")
        out = nan_out(67, 45, torch.float32, "cuda")
        tritonmm.mm(a, b, out=out, input_precision="ieee")
        assert rel_err(out, a, b) < BOUND[torch.float32]
    assert len(plans) == 1
    assert Product(a, b, out, "ieee").stagers == [None, tritonmm.staging.n_major_copy]
    _replays_right(_captured(lambda: tritonmm.mm(a, b, out=out, input_precision="ieee")), a, b, out)
    before = len(plans)
    for _ in range(3):  # a batch (q @ k.T): its entries' B from one copy, each call's own
        za, zb = torch.randn(3, 37, 40, device="cuda"), torch.randn(3, 29, 40, device="cuda").transpose(1, 2)
        zout = torch.full((3, 37, 29), float("nan"), device="cuda")
        tritonmm.matmul(za, zb, out=zout, input_precision="ieee")
        assert rel_err(zout, za, zb) < BOUND[torch.float32]
    assert len(plans) == before + 1 and Product(za, zb, zout, "ieee").stagers == [None, tritonmm.staging.n_major_copy]
    _replays_right(_captured(lambda: tritonmm.matmul(za, zb, out=zout, input_precision="ieee")), za, zb, zout)


@pytest.mark.gpu
def test_gpu_few_tile_unaligned_product_is_staged_in_a_graph(monkeypatch, tmp_path):
    """A product of few tiles whose rows are 2 bytes apart runs on the caller's operands eagerly and on
    staged ones inside a CUDA graph, under a config its first eager call tuned; the replay is right."""
    from tritonmm import tuning
    a, b, out, eager, captured = _first_eager_call(monkeypatch, tmp_path, 333, 138, 2569)
    assert not eager.staged and eager.differs_when_captured and eager.loads == "@2.2"
    assert captured.path == "pointer" and captured.staged and captured.tuning_key in tuning._memory
    _replays_right(_captured(lambda: tritonmm.mm(a, b, out=out)), a, b, out)


class _Launched:
    """Stands in for a compiled kernel's relaunch: records the call, launches nothing."""

    def __init__(self):
        self.calls = 0
        self.tensors = None

    def __call__(self, tensors, stream):
        self.calls += 1
        self.tensors = tensors
        return True


def _seed(monkeypatch, a, b, bias=None, activation="none", precision="native", served=False):
    """A launch-cache entry for product(a, b, ...), as an earlier eager call would leave it (``served``: one planned as
    native.cpp's first call, relaunch.key)."""
    from tritonmm import fast_launch
    monkeypatch.setitem(fast_launch._state, "enabled", True)
    monkeypatch.setattr(fast_launch, "current_stream", lambda index: 0)
    monkeypatch.setattr(devices, "index", lambda d: 0)
    launched = _Launched()
    key = relaunch.key(a, b, None, bias, activation, precision, served=served)
    out_layout = ((a.shape[0], b.shape[1]), (b.shape[1], 1))
    monkeypatch.setitem(relaunch._entries, key, relaunch.Entry((launched,), None, (0, 0, 0), out_layout, None))
    return launched


def test_plan_follows_tma_shift(monkeypatch, device):
    """thresholds.TABLE["sm90"].tma_shift reaches the TMA kernel's constants."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    a, b = torch.randn(40, 32, device=device).half(), torch.randn(32, 48, device=device).half()
    assert Product(a, b, torch.empty(40, 48, dtype=torch.float16, device=device), "native").constants["SHIFT"]
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_shift", False)
    assert not Product(a, b, torch.empty(40, 48, dtype=torch.float16, device=device), "native").constants["SHIFT"]


def test_threshold_overrides_key_cached_launches_apart(monkeypatch, device):
    """The thresholds' overrides are part of relaunch.key: a launch planned (and compiled: tma_shift is a kernel
    constant) under one value of any threshold is never relaunched under another, and the entry made without
    overrides is found again once they are undone."""
    a, b = torch.randn(8, 16, device=device).half(), torch.randn(16, 12, device=device).half()
    plain = relaunch.key(a, b, None, None, "none", "native")
    _seed(monkeypatch, a, b)
    for name in thresholds.Thresholds._fields:
        value = getattr(thresholds.TABLE["sm90"], name)
        with thresholds.override(**{name: not value if isinstance(value, bool) else value + 1}):
            assert relaunch.key(a, b, None, None, "none", "native") != plain, name
            assert relaunch.lookup(a, b) is None, name
    assert relaunch.key(a, b, None, None, "none", "native") == plain and plain in relaunch._entries
    with pytest.raises(TypeError, match="unknown threshold"):
        with thresholds.override(tma_min_mac=0):
            pass


def test_relaunch_keeps_the_checks_it_skips(monkeypatch, device):
    """A cached key is reached only by calls that would pass the checks: a bogus precision for a
    16-bit product, or a linear bias of a shape linear refuses (the aten override caches addmm's
    matrix biases), take the full path and raise."""
    a, b = torch.randn(8, 16, device=device).half(), torch.randn(16, 12, device=device).half()
    launched = _seed(monkeypatch, a, b, served=native.serves(a.dtype))  # mm's: served where native.cpp asked first
    tritonmm.mm(a, b)
    assert launched.calls == 1  # the seeded entry is live
    with pytest.raises(ValueError, match="input_precision"):
        tritonmm.mm(a, b, input_precision="bogus")
    w = b.T
    matrix_bias = torch.randn(8, 12, device=device).half()
    launched = _seed(monkeypatch, a, b, bias=matrix_bias)
    with pytest.raises(ValueError, match="bias"):
        tritonmm.linear(a, w, matrix_bias)
    assert launched.calls == 0
    vector_bias = torch.randn(12, device=device).half()
    launched = _seed(monkeypatch, a, b, bias=vector_bias, activation="relu")
    assert tritonmm.linear(a[None], w, vector_bias, "relu").shape == (1, 8, 12)  # linear's own relaunch path
    assert launched.calls == 1


class _Subclass(torch.Tensor):
    pass


def test_linear_relaunch_keys_the_weight_as_its_transpose(monkeypatch, device):
    """linear's relaunch builds the key of x @ weight.T from weight itself (launch_key's b_transposed): equal to
    the view's key for plain, Parameter, column-major, strided and subclass weights; an entry that stages B gets
    the view to copy, and an entry that does not launches on the weight itself (the view's data_ptr)."""
    x = torch.randn(8, 16, device=device).half()
    weights = [torch.randn(12, 16), torch.randn(16, 12).T, torch.randn(12, 32)[:, ::2], torch.randn(12, 16)]
    weights = [w.to(device).half() for w in weights]
    weights[-1] = torch.nn.Parameter(weights[-1])
    weights.append(weights[0].as_subclass(_Subclass))
    for w in weights:
        assert relaunch.key(x, w, None, None, "relu", "native", b_transposed=True) == \
            relaunch.key(x, w.T, None, None, "relu", "native"), type(w)
    w = weights[0]
    launched = _seed(monkeypatch, x, w.T, activation="relu")
    tritonmm.linear(x, w, activation="relu")
    assert launched.calls == 1 and launched.tensors[0] is x and launched.tensors[1] is w
    copied = []
    entry = relaunch._entries[relaunch.key(x, w.T, None, None, "relu", "native")]
    monkeypatch.setitem(relaunch._entries, relaunch.key(x, w.T, None, None, "relu", "native"),
                        entry._replace(stage=(None, lambda b, traced: copied.append(b) or b)))
    tritonmm.linear(x, w, activation="relu")
    assert launched.calls == 2 and copied[0].shape == (16, 12) and copied[0].stride() == (1, 16)


@pytest.mark.gpu
@pytest.mark.parametrize("K", [33, 64], ids=["unaligned", "aligned"])
def test_gpu_linear_relaunches_right_on_the_weight_itself(K, staging, monkeypatch):
    """linear planned once and relaunched on fresh inputs, keyed by its weight (no weight.T built): the launch
    reads the weight itself, or (K of 33: rows TMA cannot read) a staged copy of its transposed view; right on
    every call, against float64."""
    plans = []
    real = Product.__init__
    monkeypatch.setattr(Product, "__init__", lambda self, *a, **k: plans.append(1) or real(self, *a, **k))
    for _ in range(3):
        x, w = torch.randn(67, K, device="cuda").half(), torch.randn(45, K, device="cuda").half()
        bias = torch.randn(45, device="cuda").half()
        y = tritonmm.linear(x, w, bias, "relu")
        ref = linear_ref(x, w, bias, "relu")
        assert ((y.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]
    assert len(plans) == 1
    assert planner.chosen(x, w.T, "native", bias, "relu")[1] == ("tma+staged" if K == 33 else "tma")


def test_split_k_is_refused_where_the_workspace_passes_int32(device, pointer):
    a, b = operands(4, 16, 4096, torch.float16, "NT", device)
    launch = Product(a, b, torch.empty(4, 16, dtype=torch.float16, device=device), "native")
    cfg = config_space.make_config(16, 16, 128, 2, 4, SPLIT_K=4)
    assert launch.split(cfg) == 4
    launch.M = launch.N = 46341  # 4 * 46341**2 > 2**31
    assert launch.split(cfg) == 1


def test_tuning_where_nothing_compiles_says_so(device, monkeypatch):
    from triton.runtime.errors import OutOfResources

    from tritonmm import timing, tuning
    a, b = operands(1024, 1024, 1024, torch.float16, "NN", device)
    launch = Product(a, b, torch.empty(1024, 1024, dtype=torch.float16, device=device), "native")
    assert len(launch.candidates()) > 1

    def unrunnable(fn, **kwargs):
        raise OutOfResources(300000, 232448, "shared memory")
    monkeypatch.setattr(timing, "median_ms", unrunnable)
    with pytest.raises(RuntimeError, match="no config"):
        tuning.tune(launch)


def test_traced_pointer_launch_takes_no_as_strided_views(device):
    """Traced, the pointer kernel takes unsqueeze(0) views, never as_strided ones: torch 2.11 beside Triton 3.8
    takes every tensor of a wrapped kernel as written, and cannot functionalize a write through as_strided
    (a compiled model's few-row linear failed to compile). Its batch strides are 0 either way."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a, w = torch.empty(4, 64, dtype=torch.bfloat16, device=device), torch.empty(48, 64, dtype=torch.bfloat16,
                                                                                     device=device)
        out = torch.empty(4, 48, dtype=torch.bfloat16, device=device)
        plan = Product(a, w.T, out, "native")
        assert plan.traced and plan.path == "pointer"
        views, strides = plan.args[:3], plan.args[9:18]
        for view, t in zip(views, (a, w.T, out)):
            assert view.shape == (1, *t.shape) and view.stride()[1:] == t.stride() and view.stride(0) != 0
        assert strides[0::3] == (0, 0, 0) and strides[1:3] == a.stride() and strides[4:6] == w.T.stride()


def test_scaled_mm_traced_with_fake_tensors_keeps_scales_and_dtype(device):
    """make_fx-style tracing records the scaled_mm operator, not a plain product."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(2048, 2048, dtype=torch.float8_e4m3fn, device=device)
        b = torch.empty(2048, 2048, dtype=torch.float8_e4m3fn, device=device).T
        y = tritonmm.scaled_mm(a, b, torch.ones(2048, 1, device=device), torch.ones(1, 2048, device=device),
                               out_dtype=torch.bfloat16)
    assert y.dtype == torch.bfloat16 and y.shape == (2048, 2048)


# Programmatic dependent launch (thresholds.TABLE["sm90"].pdl): a launch with launch_pdl=True may begin before the kernel before it in
# the stream has ended, so it must be a kernel that waits for its predecessor first (kernels/tiles.py).

HOPPER = devices.DeviceFacts("NVIDIA H100 80GB HBM3", 132, 232448, True, True)
AMPERE = devices.DeviceFacts("NVIDIA A100-SXM4-80GB", 108, 166912, False, False)


def test_pdl_only_where_it_can_run(monkeypatch):
    """On Hopper, compiled, for real tensors: not before Hopper, not traced, not in Triton's interpreter, not
    when the setting is off."""
    monkeypatch.setattr(validation, "interpreting", lambda: False)
    assert launching.pdl(HOPPER, traced=False)
    assert not launching.pdl(HOPPER, traced=True) and not launching.pdl(AMPERE, traced=False)
    monkeypatch.setitem(thresholds.OVERRIDES, "pdl", False)
    assert not launching.pdl(HOPPER, traced=False)
    monkeypatch.setitem(thresholds.OVERRIDES, "pdl", True)
    monkeypatch.setattr(validation, "interpreting", lambda: True)
    assert not launching.pdl(HOPPER, traced=False)
    assert launching.options(True, 4, 3) == dict(num_warps=4, num_stages=3, launch_pdl=True)
    assert launching.options(False, 8) == dict(num_warps=8)


def _early_launches(launch, cfgs) -> list:
    """(kernel name, whether launched with launch_pdl, the PDL constant it gets, whether the kernel takes PDL) of
    each of launch's steps."""
    return [(kernel.__name__, options.get("launch_pdl", False), constants.get("PDL"), "PDL" in kernel.arg_names)
            for cfg in cfgs for kernel, _, _, constants, options in launch.steps(cfg)]


@pytest.mark.parametrize("pdl", [True, False])
def test_every_launch_with_pdl_waits_for_its_predecessor(pdl, device, monkeypatch):
    """With PDL every step of every path (pointer, split-K's two passes, the one-row kernel, the TMA kernel whole,
    split and in a wave-tail split, the staging copies) is launched with launch_pdl and its kernel gets PDL, the
    constant that makes it wait; without, none is."""
    monkeypatch.setattr(launching, "pdl", lambda facts, traced: pdl)
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
    monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
    monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 0)
    steps = []
    for M in (1, 40):
        a, b = operands(M, 96, 256, torch.float16, "NT", device)
        launch = Product(a, b, nan_out(M, 96, torch.float16, device), "native")
        assert launch.path == "pointer"
        cfgs = [config_space.make_config(32, 32, 32, 2, 4), config_space.make_config(32, 32, 32, 2, 4, SPLIT_K=2)]
        steps += _early_launches(launch, cfgs + ([config_space.make_config(1, 16, 64, 1, 4)] if M == 1 else []))
    every_product_on_tma(monkeypatch)  # planned for a stand-in Hopper of 4 SMs: nothing here runs on it
    monkeypatch.setattr(devices, "facts", lambda d: HOPPER._replace(num_sms=4))
    copies = []  # the staging copy is recorded, not run (the interpreter has no griddepcontrol)
    monkeypatch.setattr(launching, "launcher", lambda kernel, traced: _Recorder(kernel, copies, _pdl_entry))
    a, b = operands(300, 70, 90, torch.float16, "NN", device)  # unaligned: staged by a copy launch
    launch = Product(a, b, nan_out(300, 70, torch.float16, device), "native")
    tail = config_space.make_config(64, 64, 32, 2, 4, TAIL=1)
    assert launch.path == "tma" and launch.staged and launch.row_ranges(tail) and copies
    steps += copies + _early_launches(launch, [config_space.make_config(64, 64, 32, 2, 4),
                                               config_space.make_config(64, 64, 32, 2, 4, SPLIT_K=2), tail])
    names = {name for name, *_ in steps}
    assert names == {"gemm_kernel", "split_k_reduce_kernel", "gemv_kernel", "gemm_tma_kernel", "copy_kernel"}
    assert all(early == pdl and constant == pdl and waits for _, early, constant, waits in steps), steps


def _pdl_entry(kernel, grid, kwargs) -> tuple:
    """A launch as the PDL rule sees it: (name, launch_pdl, PDL, whether the kernel takes PDL)."""
    return kernel.__name__, kwargs.get("launch_pdl", False), kwargs.get("PDL"), "PDL" in kernel.arg_names


def _chain(xs, ws, outs):
    """outs[i] = (outs[i - 1] or xs) @ ws[i]: each product reads the one before it."""
    prev = xs
    for w, out in zip(ws, outs):
        tritonmm.mm(prev, w, out=out)
        prev = out


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["pointer", "pointer split", "one row", "tma", "tma split", "tma staged",
                                  "tma tail"])
def test_gpu_chained_products_read_their_predecessors_result(kind, monkeypatch, tmp_path):
    """Products launched back to back, each reading the result of the one before, with PDL: eagerly (planned,
    then relaunched from the cache) and replayed from a CUDA graph into NaN-filled results, every result right
    against float64 of its own input; and bit for bit what the same chain gives without PDL."""
    from tritonmm import tuning
    if not devices.facts(torch.device("cuda")).tma:
        pytest.skip("PDL needs Hopper")
    monkeypatch.setenv("TRITONMM_CACHE_DIR", str(tmp_path))
    M, K = {"one row": (1, 512), "tma tail": (1100, 520), "tma staged": (300, 333)}.get(kind, (200, 512))
    cfg = {"pointer": config_space.make_config(64, 64, 64, 3, 4),
           "pointer split": config_space.make_config(64, 64, 64, 3, 4, SPLIT_K=4),
           "one row": config_space.make_config(1, 16, 128, 1, 4),
           "tma": config_space.make_config(64, 128, 64, 4, 4),
           "tma split": config_space.make_config(64, 128, 64, 4, 4, SPLIT_K=3),
           "tma staged": config_space.make_config(64, 128, 64, 4, 4),
           "tma tail": config_space.make_config(128, 128, 64, 4, 4, TAIL=1)}[kind]
    if kind.startswith("tma"):
        every_product_on_tma(monkeypatch)
    else:
        monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", float("inf"))
        monkeypatch.setitem(thresholds.OVERRIDES, "stream_model", False)  # nor few rows in graphs
        monkeypatch.setitem(thresholds.OVERRIDES, "stage_min_macs_per_byte", float("inf"))
        monkeypatch.setitem(thresholds.OVERRIDES, "pointer_stage_max_load_bytes", 0)
    if kind == "tma tail":
        monkeypatch.setattr(devices, "facts", lambda d: HOPPER._replace(num_sms=20))  # 9 x 5 tiles: 2.25 waves
    xs = torch.randn(M, K, device="cuda").half()
    ws = [(torch.randn(K, K, device="cuda") / K ** 0.5).half() for _ in range(4)]
    outs = [nan_out(M, K, torch.float16, "cuda") for _ in ws]
    launch = Product(xs, ws[0], outs[0], "native")
    assert launch.path == ("tma" if kind.startswith("tma") else "pointer")
    assert launch.staged == (kind == "tma staged") and bool(launch.row_ranges(cfg)) == (kind == "tma tail")
    assert launch.split(cfg) == {"pointer split": 4, "tma split": 3}.get(kind, 1) and launch.constants["PDL"]
    tuning._remember(launch.tuning_key, cfg)

    def check():
        prev = xs
        for w, out in zip(ws, outs):
            ref = prev.double() @ w.double()
            assert ((out.double() - ref).norm() / ref.norm()).item() < BOUND[torch.float16]
            prev = out

    try:
        for _ in range(3):  # planned, then relaunched
            for out in outs:
                out.fill_(float("nan"))
            _chain(xs, ws, outs)
            check()
        with_pdl = [torch.empty_like(out) for out in outs]
        graph = _captured(lambda: _chain(xs, ws, outs))
        for _ in range(3):
            xs.copy_(torch.randn(M, K, device="cuda"))
            for out in outs:
                out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            check()
        xs.copy_(torch.randn(M, K, device="cuda"))
        _chain(xs, ws, with_pdl)
        monkeypatch.setitem(thresholds.OVERRIDES, "pdl", False)
        _chain(xs, ws, outs)
        assert all(torch.equal(x, y) for x, y in zip(with_pdl, outs))
        assert not Product(xs, ws[0], outs[0], "native").constants["PDL"]
    finally:
        tuning.forget()


def test_large_batch_entries_run_as_unbatched_products(device, monkeypatch):
    """A batch whose every entry would take the TMA kernel alone, but whose rows TMA cannot read as they are (K of
    47 halves: 94-byte rows), runs as one unbatched product per entry (rules.batch_slices), a broadcast operand
    included, into out's entries, as chosen() says; a batch of small entries keeps one launch of the batched pointer
    kernel, and so does one whose entries' tiles fall short of batch_slice_min_fill of the SMs (as shipped, here: the
    one 128x128 tile of an entry, on 4 stand-in SMs or a GPU's; lowered to 0 for the rest)."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    assert "sliced" not in planner.chosen(torch.empty(3, 40, 47, device=device).half(),
                                          torch.empty(47, 56, device=device).half().expand(3, 47, 56), "native")[1]
    monkeypatch.setitem(thresholds.OVERRIDES, "batch_slice_min_fill", 0)
    shapes = []
    real = Product.__init__
    monkeypatch.setattr(Product, "__init__", lambda self, a, *r, **k: shapes.append(tuple(a.shape)) or real(self, a, *r, **k))
    a = torch.randn(3, 40, 47, device=device).half()
    b = torch.randn(47, 56, device=device).half().expand(3, 47, 56)  # one weight for every entry: batch stride 0
    out = torch.full((3, 40, 56), float("nan"), device=device).half()
    planner.product(a, b, precision="native", out=out)
    assert shapes and all(len(s) == 2 for s in shapes), shapes
    for z in range(3):
        assert rel_err(out[z], a[z], b[z]) < 2e-3
    assert planner.chosen(a, b, "native")[1] == "tma+staged+sliced"
    inf = float("inf")
    for over in (dict(stage_min_macs_per_byte=inf, stage_min_macs_per_byte_wide_reads=inf),  # too small to stage
                 dict(batch_slice_min_fill=1)):  # an entry's one 128x128 tile, short of the 4 SMs
        shapes.clear()
        with thresholds.override(**over):
            c = planner.product(a, b, precision="native")
            assert "sliced" not in planner.chosen(a, b, "native")[1]
        assert shapes[0] == (3, 40, 47), over
        assert all(rel_err(c[z], a[z], b[z]) < 2e-3 for z in range(3))


def test_realign_counts_the_copys_fixed_cost_and_eager_calls_copy_only_large_products(device):
    """rules.realign: a copy counts realign_fixed_bytes more than it moves, so a product just past the per-byte bar
    is left as it is once that cost is counted; an eager call copies only from realign_eager_min_macs, a captured
    one at any size."""
    a, b = operands(40, 72, 56, torch.bfloat16, "NN", device)  # rows of 112 bytes: 16 past a multiple of 32
    facts, moved = devices.facts(a.device), layout_module.copy_bytes(b)
    macs = 100 * moved  # 100 multiply-adds per byte the copy of B moves
    with thresholds.override(realign_min_macs_per_byte_b=100, realign_fixed_bytes=0, realign_eager_min_macs=0):
        assert rules.realign(facts, b, macs, 1, True) and rules.realign(facts, b, macs, 1, False)
    with thresholds.override(realign_min_macs_per_byte_b=100, realign_fixed_bytes=moved, realign_eager_min_macs=0):
        assert not rules.realign(facts, b, macs, 1, True)
        assert rules.realign(facts, b, 2 * macs, 1, True)
    with thresholds.override(realign_min_macs_per_byte_b=100, realign_fixed_bytes=0, realign_eager_min_macs=macs + 1):
        assert rules.realign(facts, b, macs, 1, True) and not rules.realign(facts, b, macs, 1, False)
        assert rules.realign(facts, b, macs + 1, 1, False)


def test_a_copy_only_graphs_make_plans_the_graph_apart(device, monkeypatch):
    """Where realign copies an operand in a CUDA graph and not eagerly (realign_eager_min_macs), the captured plan is
    graph_only (tuned and keyed apart: design.md graph-only-rank) and the eager plan says it differs when captured,
    so the planner tunes the captured one ahead; where both copy alike, neither."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    monkeypatch.setitem(thresholds.OVERRIDES, "realign_fixed_bytes", 0)
    monkeypatch.setitem(thresholds.OVERRIDES, "realign_min_macs_per_byte_b", 0)
    a, b = operands(40, 72, 56, torch.bfloat16, "NN", device)  # B's rows 144 bytes apart: 16 past a multiple of 32
    for eager_bar, differs in ((float("inf"), True), (0, False)):
        with thresholds.override(realign_eager_min_macs=eager_bar):
            eager = Product(a, b, nan_out(40, 72, torch.bfloat16, device), "native", captured=False)
            graph = Product(a, b, nan_out(40, 72, torch.bfloat16, device), "native", captured=True)
            assert eager.path == graph.path == "tma" and graph.stagers[1] is not None
            assert (eager.stagers[1] is None) == differs
            assert eager.differs_when_captured == graph.graph_only == differs, eager_bar
            assert rules.tma_copies(devices.facts(a.device), [layout_module.tma_source(t) for t in (a, b)],
                                    [None, None], 40 * 72 * 56, False) == [False, not differs]


@pytest.mark.parametrize("layout", ["NN", "NT"])
def test_rows_not_128_byte_aligned_are_realigned_where_it_pays(layout, device, monkeypatch):
    """16-bit TMA operands whose rows are 16 but not 32 bytes apart are copied into 128-byte aligned rows where the
    product does enough multiply-adds per copied byte (rules.realign), A and B each by its own bar; rows 32 bytes
    apart or more never are; the result is the same product."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    monkeypatch.setitem(thresholds.OVERRIDES, "realign_eager_min_macs", 0)  # these eager products are tiny
    a, b = operands(40, 72, 56, torch.bfloat16, layout, device)  # rows of 112 (A) and 144 or 112 (B) bytes: 16 * odd
    for bar_a, bar_b, expected in ((0, 0, [True, True]), (0, float("inf"), [True, False]),
                                   (float("inf"), 0, [False, True]), (float("inf"), float("inf"), [False, False])):
        with thresholds.override(realign_min_macs_per_byte_a=bar_a, realign_min_macs_per_byte_b=bar_b):
            out = nan_out(40, 72, torch.bfloat16, device)
            plan = Product(a, b, out, "native")
            assert plan.path == "tma" and [s is not None for s in plan.stagers] == expected, (bar_a, bar_b)
            for staged, t in zip(plan.stagers, (plan.a, plan.b)):
                source = layout_module.tma_source(t)[0]
                assert not staged or layout_module.row_bytes(source) % 128 == 0
            plan.run(plan.heuristic())
            assert rel_err(out, a, b) < 1e-2
    with thresholds.override(realign_min_macs_per_byte_a=0, realign_min_macs_per_byte_b=0):
        for n, k in ((64, 128), (80, 48), (96, 112)):  # rows 128 or more, 32 and 64 bytes apart: left as they are
            kept = operands(40, n, k, torch.bfloat16, layout, device)
            assert Product(*kept, nan_out(40, n, torch.bfloat16, device), "native").stagers == [None, None], (n, k)
        f32 = operands(40, 72, 56, torch.float32, layout, device)
        assert not any(rules.realign(devices.facts(f32[0].device), t, 10 ** 12, i, True) for i, t in enumerate(f32))
