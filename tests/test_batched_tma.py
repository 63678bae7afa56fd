"""Batches on the TMA kernel in one launch (kernels/gemm_tma.py, BATCH_*; rules.batched_tma): every layout, a
broadcast operand, ragged entries whose tiles TMA clips at each entry's edge, C through pointers, and the rule."""
import pytest
import torch
from conftest import every_product_on_the_tma_kernel, rel_err

from tritonmm import device as devices, planner, thresholds
from tritonmm.product import Product

BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2}


def batch(Z, M, N, K, layout, dtype, device, broadcast=""):
    """(a, b) for Z products of layout ("NN", "NT", "TN", "TT": A, then B, as rows or a transposed view), fresh
    random values; broadcast "a" or "b": that operand one entry expanded over the batch (batch stride 0)."""
    def one(rows, cols, transposed, entries):
        t = torch.randn(entries, cols, rows, device=device) if transposed else torch.randn(entries, rows, cols, device=device)
        t = t.to(dtype)
        return t.transpose(1, 2) if transposed else t
    a = one(M, K, layout[0] == "T", 1 if broadcast == "a" else Z)
    b = one(K, N, layout[1] == "T", 1 if broadcast == "b" else Z)
    return a.expand(Z, M, K), b.expand(Z, K, N)


def run(a, b, dtype):
    """The product into a NaN-filled out, and its plan."""
    out = torch.full((a.shape[0], a.shape[1], b.shape[2]), float("nan"), dtype=dtype, device=a.device)
    plan = Product(a, b, out, "native")
    planner.product(a, b, precision="native", out=out)
    return out, plan


# Entries of ragged M and N (tiles past each entry's edge read another entry's rows unless TMA clips them), a
# K that ends mid-step, entries of fewer rows than a tile.
SHAPES = [(3, 40, 72, 24), (2, 70, 48, 40), (4, 9, 24, 88), (2, 136, 40, 56)]


@pytest.mark.parametrize("layout", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_batch_on_the_tma_kernel_against_float64(shape, layout, dtype, device, monkeypatch):
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    Z, M, N, K = shape
    a, b = batch(Z, M, N, K, layout, dtype, device)
    if layout[0] == "T" and M * a.element_size() % 16:
        pytest.skip("A's rows (M long) are not 16-byte aligned: not a batch TMA reads")
    out, plan = run(a, b, dtype)
    assert plan.path == "tma" and plan.constants["BATCH_A"] and plan.constants["BATCH_B"] and plan.constants["BATCH_C"]
    assert not plan.staged
    for z in range(Z):
        assert rel_err(out[z], a[z], b[z]) < BOUND[dtype], z


@pytest.mark.parametrize("broadcast", ["a", "b"])
def test_broadcast_operand_is_one_2d_descriptor(broadcast, device, monkeypatch):
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    a, b = batch(3, 40, 56, 48, "NT", torch.bfloat16, device, broadcast)
    out, plan = run(a, b, torch.bfloat16)
    assert plan.path == "tma" and plan.constants["BATCH_A"] == (broadcast != "a")
    assert plan.constants["BATCH_B"] == (broadcast != "b")
    assert len(plan.args[0].shape) == (2 if broadcast == "a" else 3)
    for z in range(3):
        assert rel_err(out[z], a[z], b[z]) < BOUND[torch.bfloat16], z


def test_c_through_pointers_and_batch_strides(device, monkeypatch):
    """N odd: C's rows are not 16-byte aligned, so C is stored through pointers with its batch stride; the entries
    of A and B sit in larger buffers (batch strides past their ends), and out is a view with a batch stride of its own."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    Z, M, N, K = 3, 37, 41, 32
    a = torch.randn(Z, M + 5, K, device=device).half()[:, :M]
    b = torch.randn(Z, N, K + 8, device=device).half()[:, :, :K].transpose(1, 2)  # rows of K + 8: 16-byte aligned
    big = torch.full((Z, M + 2, N), float("nan"), device=device).half()
    out = big[:, 1:M + 1]
    plan = Product(a, b, out, "native")
    assert plan.path == "tma" and not plan.constants["C_DESC"] and plan.constants["BATCH_C"]
    planner.product(a, b, precision="native", out=out)
    for z in range(Z):
        assert rel_err(out[z], a[z], b[z]) < BOUND[torch.float16], z
    assert big[:, 0].isnan().all() and big[:, -1].isnan().all()  # the rows around out untouched


def test_rule_takes_readable_batches_only(device, monkeypatch):
    """rules.batched_tma: 16-bit batches TMA reads as they are; a misaligned batch stride, unaligned rows, float32,
    or the threshold off leave the batch to the other paths."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    from tritonmm import rules
    facts = devices.facts(torch.device(device))
    a, b = batch(3, 40, 56, 48, "NN", torch.float16, device)
    assert rules.batched_tma(facts, a, b, False)
    odd_stride = torch.randn(3 * 40 * 48 + 3, device=device).half().as_strided((3, 40, 48), (40 * 48 + 1, 48, 1))
    assert not rules.batched_tma(facts, odd_stride, b, False)
    assert not rules.batched_tma(facts, torch.randn(3, 40, 47, device=device).half(), torch.randn(3, 47, 56, device=device).half(), False)
    assert not rules.batched_tma(facts, a.float(), b.float(), False)
    with thresholds.override(batched_tma=False):
        assert not rules.batched_tma(facts, a, b, False)
        out, plan = run(a, b, torch.float16)
        assert plan.path == "pointer"
        assert all(rel_err(out[z], a[z], b[z]) < BOUND[torch.float16] for z in range(3))


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["NT", "TN"])
def test_gpu_batch_relaunches_and_replays(layout, monkeypatch):
    """On the GPU: torch.bmm under use_tritonmm on the batched TMA kernel, planned, then relaunched from the launch
    cache (descriptors re-pointed at new operands), then replayed from a CUDA graph: right on fresh inputs each time."""
    import tritonmm
    every_product_on_the_tma_kernel(monkeypatch, "cuda")
    Z, M, N, K = 6, 200, 328, 264
    out = torch.empty(Z, M, N, dtype=torch.bfloat16, device="cuda")
    assert Product(*batch(Z, M, N, K, layout, torch.bfloat16, "cuda"), out, "native").constants["BATCH_C"]
    with tritonmm.use_tritonmm():
        for _ in range(3):
            a, b = batch(Z, M, N, K, layout, torch.bfloat16, "cuda")
            out.fill_(float("nan"))
            torch.bmm(a, b, out=out)
            assert all(rel_err(out[z], a[z], b[z]) < BOUND[torch.bfloat16] for z in range(Z))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            torch.bmm(a, b, out=out)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            torch.bmm(a, b, out=out)
    for _ in range(2):
        a.copy_(batch(Z, M, N, K, layout, torch.bfloat16, "cuda")[0])
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert all(rel_err(out[z], a[z], b[z]) < BOUND[torch.bfloat16] for z in range(Z))


def test_batch_only_a_graph_puts_on_the_tma_kernel_keys_apart(device, monkeypatch):
    """A batch under the eager TMA bar but over the captured one (captured_tma_divisor) takes the TMA kernel only in
    a CUDA graph: its plan says so (graph_only), so its tuned config keys apart from the eager plan's."""
    every_product_on_the_tma_kernel(monkeypatch, device, stand_in_sms=4)
    a, b = batch(3, 40, 56, 48, "NN", torch.float16, device)
    macs = 3 * 40 * 56 * 48
    monkeypatch.setitem(thresholds.OVERRIDES, "tma_min_macs", macs + 1)
    monkeypatch.setitem(thresholds.OVERRIDES, "captured_tma_divisor", 2)
    out = torch.empty(3, 40, 56, dtype=torch.float16, device=device)
    eager, captured = Product(a, b, out, "native", captured=False), Product(a, b, out, "native", captured=True)
    assert eager.path == "pointer" and eager.differs_when_captured
    assert captured.path == "tma" and captured.graph_only and captured.tuning_key != eager.tuning_key
