"""The CUDA ladder: every kernel (fp32 steps and 16-bit tensor-core steps) against float64 on the
GPU; on the CPU, a compile-only build and the argument checks."""
import os
import shutil
import subprocess

import pytest
import torch
from conftest import HAS_GPU, rel_err

import cuda_reference
from cuda_reference import KERNELS, launcher_name, runs_on

VARIANTS = [(k, {p: v}) for k, info in KERNELS.items() for p, vals in info.params.items() for v in vals] + \
           [(k, {}) for k, info in KERNELS.items() if not info.params]
FP32_VARIANTS = [(k, p) for k, p in VARIANTS if KERNELS[k].dtypes == (torch.float32,)]
HALF_VARIANTS = [(k, p) for k, p in VARIANTS if KERNELS[k].dtypes == (torch.float16, torch.bfloat16)]
TMA_KERNELS = [k for k, info in KERNELS.items() if info.tma]  # steps 13-16: rows 16-byte aligned only
TMA_VARIANTS = [(k, p) for k, p in HALF_VARIANTS if KERNELS[k].tma]  # with step 16's stages=4 and 3
# The persistent steps (15, 16) in every built variant: grids capped to walk many tiles per cluster.
PERSISTENT_VARIANTS = [(k, p) for k, p in TMA_VARIANTS if k in ("persistent", "tma_store")]
SHAPES = [(1, 1, 1), (7, 13, 5), (33, 65, 31), (127, 129, 257), (130, 67, 200), (256, 256, 256), (300, 4, 1001)]
# The 16-bit kernels also on shapes whose rows are 16-byte aligned (K and N multiples of 8):
# the cp.async path, once on whole tiles, once with partial tiles and more slices than stages.
HALF_SHAPES = SHAPES + [(256, 512, 128), (384, 264, 1000)]
# Inputs are exact in their dtype, so the error is C's final rounding (2^-11 fp16, 2^-8 bf16)
# plus fp32 accumulation; these are the bounds tritonmm's own tests use.
HALF_BOUND = {torch.float16: 2e-3, torch.bfloat16: 1e-2}
# 9 K-slices of 64 through step 12's ring of 4 buffers (one of emulate.SHAPES).
RING_WRAP = (130, 264, 520)
# Steps 13-16 read through TMA (K and N multiples of 8): partial tiles in M, N and K, one row,
# one slice, a pair tile half below M (step 15: 300 rows are 3 tiles), the ring wrapping.
TMA_SHAPES = [(1, 8, 8), (7, 16, 40), (33, 72, 24), (127, 136, 264), (130, 264, 200), (256, 256, 256),
              (300, 8, 1000), (256, 512, 128), (384, 264, 1000), RING_WRAP]


def test_registry_matches_the_build():
    from cuda_reference.build import KERNEL_DIR, LAUNCHERS, LAUNCHERS16, sources
    assert {launcher_name(k, p) for k, p in FP32_VARIANTS} == set(LAUNCHERS)
    assert {launcher_name(k, p) for k, p in HALF_VARIANTS} == set(LAUNCHERS16)
    assert len(FP32_VARIANTS) + len(HALF_VARIANTS) == len(VARIANTS)
    cuda = sources()[1]
    for name in LAUNCHERS:
        assert f"cudaError_t launch_{name}(int M, int N, int K, const float* A" in cuda, name
    for name in LAUNCHERS16:
        assert (f"cudaError_t launch_{name}(int M, int N, int K, const void* A, const void* B, void* C, int dtype"
                in cuda), name
    steps = sorted(info.step for info in KERNELS.values())
    assert steps == list(range(1, len(KERNELS) + 1))
    for info in KERNELS.values():
        assert (KERNEL_DIR / info.file).exists()
        assert (KERNEL_DIR / info.file).read_text().startswith(f"// Step {info.step}: ")


def test_bad_kernel_and_params():
    with pytest.raises(ValueError, match="kernel must be one of"):
        launcher_name("fastest", {})
    with pytest.raises(ValueError, match="tile=12 is not built"):
        launcher_name("tiled", {"tile": 12})
    with pytest.raises(ValueError, match="takes no parameter"):
        launcher_name("naive", {"tile": 8})


@pytest.mark.parametrize("make, exc, words", [
    (lambda: (torch.randn(4, 4, dtype=torch.float16), torch.randn(4, 4)), TypeError, ["float32", "a.float()"]),
    (lambda: (torch.randn(4, 4), torch.randn(4, 4)), ValueError, ["CUDA tensors", "a.cuda()"]),
    (lambda: ("a", torch.randn(4, 4)), TypeError, ["a must be a torch.Tensor"]),
])
def test_bad_inputs(make, exc, words):
    a, b = make()
    with pytest.raises(exc) as info:
        cuda_reference.matmul(a, b)
    for w in words:
        assert w in str(info.value)


@pytest.mark.parametrize("kernel, make, words", [
    ("cp_async", lambda: (torch.randn(4, 4), torch.randn(4, 4)),
     ["a is torch.float32", "'cp_async'", "float16 or bfloat16", "a.half() or a.bfloat16()"]),
    ("wmma", lambda: (torch.randn(4, 4, dtype=torch.bfloat16), torch.randn(4, 4, dtype=torch.float64)),
     ["b is torch.float64", "b.half() or b.bfloat16()"]),
    ("mma_sync", lambda: (torch.randn(4, 4, dtype=torch.float16), torch.randn(4, 4, dtype=torch.bfloat16)),
     ["a is torch.float16 but b is torch.bfloat16", "b.to(a.dtype)"]),
    ("double_buffer", lambda: (torch.randn(4, 4, dtype=torch.bfloat16), torch.randn(4, 4, dtype=torch.bfloat16)),
     ["a is torch.bfloat16", "'double_buffer' needs float32: a.float()"]),
])
def test_dtype_errors_name_the_argument_and_the_fix(kernel, make, words):
    a, b = make()
    with pytest.raises(TypeError) as info:
        cuda_reference.matmul(a, b, kernel)
    for w in words:
        assert w in str(info.value)


def test_bad_tile_for_the_pipeline():
    with pytest.raises(ValueError, match="tile='64x64x32' is not built"):
        launcher_name("cp_async", {"tile": "64x64x32"})
    assert launcher_name("cp_async", {}) == "cp_async_" + KERNELS["cp_async"].params["tile"][0]


def test_tensor_core_index_math_on_the_cpu():
    """cuda_reference.emulate runs steps 10 to 12's staging, ldmatrix addresses, wgmma
    descriptors and swizzle, pipeline buffer rotation, block order and stores with the PTX
    ISA's layouts, on the CPU."""
    from cuda_reference import emulate
    emulate.check_grouped_order()
    emulate.check_ldmatrix_banks()
    emulate.check_wgmma_layout()
    emulate.check_tma_layout()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # thousands of tiny tensor ops: threads only add overhead
    try:
        emulate.check_products(shapes=[(33, 65, 31), (130, 264, 72)])
        # step 12 also with more K slices than stages: the ring wraps and every buffer is refilled
        emulate.check_products(shapes=[RING_WRAP], kernels=("wgmma",))
        # steps 13-16: a pair tile half below M, more tiles than clusters (steps 15-16 on 1 and 2);
        # step 16 through its staging boxes with both rings, and with C unaligned
        emulate.check_products(shapes=[(300, 136, 72)], kernels=("tma", "persistent", "tma_store"))
    finally:
        torch.set_num_threads(threads)


def test_tma_store_layout_check_catches_a_wrong_swizzle(monkeypatch):
    """Step 16's staging check is not vacuous: a TMA store that read the boxes unswizzled (the
    loads and descriptors, unswizzled alike, still agree with each other) gets C wrong."""
    from cuda_reference import emulate
    monkeypatch.setattr(emulate, "swizzle_address", lambda addr: addr)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with pytest.raises(AssertionError, match="tma_store"):
            emulate.check_products(shapes=[(130, 264, 72)], kernels=("tma_store",))
    finally:
        torch.set_num_threads(threads)


def test_tma_store_protocol_check_catches_broken_protocols():
    """Step 16's staging protocol check is not vacuous: waiting for one store fewer before a
    staging box is rewritten (wait_group.read 2 with two boxes) overwrites a box the TMA still
    reads; leaving out the closing wait_group 0 lets a CTA exit with a store unfinished."""
    from cuda_reference import emulate
    for kwargs, words in ((dict(store_wait=2), "staging box written while a TMA store still reads it"),
                          (dict(final_wait=False), "exit with a TMA store unfinished")):
        emulate.tma_protocol("tma_store", M=130, N=512, K=72, seed=0, clusters=1)
        with pytest.raises(AssertionError, match=words):
            for seed in range(20):  # random orders: one of them shows it
                emulate.tma_protocol("tma_store", M=130, N=512, K=72, seed=seed, clusters=1, **kwargs)


@pytest.mark.parametrize("grid_y,grid_x", [(1, 1), (3, 5), (8, 4), (9, 3), (17, 1), (20, 7)])
def test_grouped_tile_order_covers_each_tile_once(grid_y, grid_x):
    """Step 17's _g8 tile order maps the grid's blocks onto its tiles one to one, whole and partial groups
    alike, and walks down a group's 8 rows before moving right."""
    from cuda_reference import emulate
    tiles = [emulate.tile_of_block(by, bx, grid_y, grid_x, 8) for by in range(grid_y) for bx in range(grid_x)]
    assert sorted(tiles) == [(y, x) for y in range(grid_y) for x in range(grid_x)]
    if grid_y >= 8 and grid_x >= 2:
        assert tiles[:9] == [(y, 0) for y in range(8)] + [(0, 1)]


def test_warptile_tuned_index_math_on_the_cpu():
    """Step 17 (fp32): for every built config, the fetch, the transposed and padded stash, the
    double-buffer rotation, the interleaved float4 reads and the stores (emulate.warptile_tuned_kernel)
    compute C exactly and write each element once, on partial tiles and tiny shapes; the shared
    loads are conflict-free and the transposed stores at most two-way (BK = 16)."""
    from cuda_reference import emulate
    assert set(emulate.WARPTILE_TUNED) == set(KERNELS["warptile_tuned"].params["config"])
    emulate.check_warptile_tuned_banks()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        emulate.check_warptile_tuned()
    finally:
        torch.set_num_threads(threads)


def test_tma_barrier_protocols_on_random_interleavings():
    """Steps 13-16's full/empty mbarriers, phase parities, multicast and the persistent ring,
    run with every agent and asynchronous completion in random orders (emulate.tma_protocol):
    no stage is multiplied without its slice or refilled while read, nothing deadlocks."""
    from cuda_reference import emulate
    emulate.check_tma_protocol(seeds=range(2))


def test_tma_protocol_check_catches_broken_protocols():
    """The protocol check is not vacuous: step 15 without its closing cluster barrier lets a CTA
    exit while its peer still arrives on its barriers; step 13 loading one slice further ahead
    refills a buffer a wgmma is still reading."""
    from cuda_reference import emulate
    for kwargs, words in ((dict(kernel="persistent", clusters=1, end_sync=False), "a CTA that has exited"),
                          (dict(kernel="tma", ahead=emulate.TMA_STAGES - 1), "a wgmma is reading")):
        emulate.tma_protocol(M=130, N=264, K=72, seed=0, **{**kwargs, "end_sync": True, "ahead": None})
        with pytest.raises(AssertionError, match=words):
            for seed in range(20):  # random orders: one of them shows it
                emulate.tma_protocol(M=130, N=264, K=520, seed=seed, **kwargs)


def test_wgmma_ring_check_catches_an_early_refill(monkeypatch):
    """The ring check is not vacuous, and needs the wrapping shape to bite: with copies one slice
    further ahead (AHEAD = STAGES - 1, one barrier is then too few) a shape whose slices fit in
    the stages still passes, the one with more slices than stages fails."""
    from cuda_reference import emulate
    monkeypatch.setattr(emulate, "WGMMA_AHEAD", emulate.WGMMA_TILE[3] - 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        emulate.check_products(shapes=[(130, 264, 200)], kernels=("wgmma",))
        with pytest.raises(AssertionError, match="refilling a buffer still in use"):
            emulate.check_products(shapes=[RING_WRAP], kernels=("wgmma",))
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("raw", [0, 16, 0x400, 0x410, 1008])
def test_wgmma_descriptors_name_what_the_copies_wrote(raw):
    """Step 12: for every stage, warpgroup and k16 step, the addresses the A (K-major) and B
    (MN-major, transposed) descriptors imply under the 128-byte swizzle are the ones the
    swizzled cp.async copies wrote, wherever the dynamic shared memory starts."""
    from cuda_reference import emulate
    emulate.check_wgmma_layout(raw)


def test_wgmma_layout_checks_catch_a_wrong_layout(monkeypatch):
    """The layout check is not vacuous: unswizzled copies, or B's two strides swapped, fail it."""
    from cuda_reference import emulate
    with monkeypatch.context() as m:
        m.setattr(emulate, "swizzle128", lambda row, chunk: row * 128 + chunk * 16)
        with pytest.raises(AssertionError):
            emulate.check_wgmma_layout()
    desc = emulate.wgmma_descriptors
    with monkeypatch.context() as m:
        m.setattr(emulate, "wgmma_descriptors",
                  lambda ring, stage, wg, s: (desc(ring, stage, wg, s)[0],
                                              emulate.wgmma_desc(emulate.unpack_desc(desc(ring, stage, wg, s)[1])[0],
                                                                 1024, 64 * 128)))
        with pytest.raises(AssertionError):
            emulate.check_wgmma_layout()


@pytest.mark.parametrize("archs, sm90a", [("9.0", True), ("8.0;9.0+PTX", True), ("9.0a", True), ("8.0;8.6", False)])
def test_arch_flags_compile_hopper_as_sm90a(monkeypatch, archs, sm90a):
    """Step 12 needs sm_90a code: 9.0 is compiled as 9.0a (never beside a plain sm_90 cubin),
    other arches as torch would, and the launcher learns whether sm_90a code exists."""
    try:
        from torch.utils.cpp_extension import _get_cuda_arch_flags  # noqa: F401 (private to torch)
    except ImportError:
        pytest.skip("this torch has no _get_cuda_arch_flags: arch_flags() leaves the choice to torch")
    from cuda_reference.build import arch_flags
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", archs)
    flags = arch_flags()
    assert "-gencode=arch=compute_90,code=sm_90" not in flags
    assert ("-gencode=arch=compute_90a,code=sm_90a" in flags) == sm90a
    assert ("-DCUDA_REFERENCE_SM90A" in flags) == sm90a
    if "8.0" in archs:
        assert "-gencode=arch=compute_80,code=sm_80" in flags
    if "+PTX" in archs:  # PTX for later GPUs stays plain compute_90 (step 12 refuses them)
        assert "-gencode=arch=compute_90,code=compute_90" in flags


class _OnCuda(torch.Tensor):
    """A CPU tensor that says it is on cuda:0, to reach the capability check without a GPU."""

    @property
    def device(self):
        return torch.device("cuda:0")


@pytest.mark.parametrize("kernel", ["wgmma", *TMA_KERNELS])
@pytest.mark.parametrize("capability", [None, (8, 0), (9, 0), (10, 0)], ids=str)
def test_wgmma_runs_only_on_compute_capability_9_0(monkeypatch, capability, kernel):
    """runs_on and matmul's argument check, for a machine without CUDA (None) and GPUs of
    three capabilities: steps 12-16 run on 9.0 only, and the refusal names both capabilities
    and the fix; the steps with no capability run everywhere there is a GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: capability is not None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    assert KERNELS[kernel].capability == (9, 0)
    assert runs_on(kernel) == (capability == (9, 0))
    assert runs_on(kernel, "cuda:0") == (capability == (9, 0))
    assert runs_on("cp_async") and runs_on("naive")
    a = torch.Tensor._make_subclass(_OnCuda, torch.zeros(8, 8, dtype=torch.bfloat16))
    assert a.device.type == "cuda"
    if capability == (9, 0):
        cuda_reference._check(a, a, None, kernel)  # accepted: nothing raised
        return
    with pytest.raises(RuntimeError) as info:
        cuda_reference._check(a, a, None, kernel)
    msg = str(info.value)
    have = "not available" if capability is None else "compute capability {}.{}".format(*capability)
    for words in (f"'{kernel}'", "runs only on compute capability 9.0 GPUs", f"cuda:0 is {have}",
                  "Run it on a compute capability 9.0 GPU", "kernel='cp_async'"):
        assert words in msg, (words, msg)
    cuda_reference._check(a, a, None, "cp_async")  # the suggested kernel passes the same check


def _on_cuda(rows, cols, offset=0):
    """A bf16 rows x cols CPU tensor claiming to be on cuda:0, its data `offset` elements into
    a fresh 16-byte aligned buffer."""
    buf = torch.zeros(rows * cols + 8, dtype=torch.bfloat16)
    assert buf.data_ptr() % 16 == 0
    return torch.Tensor._make_subclass(_OnCuda, buf[offset:offset + rows * cols].view(rows, cols))


@pytest.mark.parametrize("kernel", TMA_KERNELS)
def test_tma_kernels_refuse_unaligned_rows_with_the_fix(monkeypatch, kernel):
    """Steps 13-16 read A and B through TMA: K or N not a multiple of 8, or a data pointer off a
    16-byte boundary, is refused before anything launches, naming what is wrong and the fix;
    aligned rows of any M pass, and so do empty products (nothing is launched for them)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    for a, b in ((_on_cuda(5, 8), _on_cuda(8, 24)), (_on_cuda(1, 64), _on_cuda(64, 8)),
                 (_on_cuda(3, 0), _on_cuda(0, 5)), (_on_cuda(0, 5), _on_cuda(5, 3))):
        cuda_reference._check(a, b, None, kernel)
    for a, b, words in ((_on_cuda(5, 12), _on_cuda(12, 8), ["K=12 is not a multiple of 8"]),
                        (_on_cuda(5, 8), _on_cuda(8, 20), ["N=20 is not a multiple of 8"]),
                        (_on_cuda(5, 8, offset=1), _on_cuda(8, 8), ["a's data starts 2 bytes past"]),
                        (_on_cuda(5, 8), _on_cuda(8, 8, offset=4), ["b's data starts 8 bytes past"])):
        with pytest.raises(ValueError) as info:
            cuda_reference._check(a, b, None, kernel)
        for w in words + [f"'{kernel}'", "through TMA", "multiples of 8", "torch.nn.functional.pad",
                          "kernel='wgmma'"]:
            assert w in str(info.value), (w, str(info.value))


@pytest.mark.gpu
def test_non_contiguous_is_refused():
    a = torch.randn(8, 8, device="cuda")
    with pytest.raises(ValueError, match="contiguous"):
        cuda_reference.matmul(a.T, a)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, params", FP32_VARIANTS, ids=lambda v: str(v))
def test_every_kernel_against_float64(kernel, params):
    for shape in SHAPES:
        M, N, K = shape
        a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
        out = torch.full((M, N), float("nan"), device="cuda")
        cuda_reference.matmul(a, b, kernel, out=out, **params)
        torch.cuda.synchronize()
        assert rel_err(out, a, b) < 1e-5, shape


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("kernel, params", HALF_VARIANTS, ids=lambda v: str(v))
def test_every_tensor_core_kernel_against_float64(kernel, params, dtype):
    if not runs_on(kernel):
        pytest.skip(f"{kernel} needs compute capability {KERNELS[kernel].capability}")
    for shape in TMA_SHAPES if KERNELS[kernel].tma else HALF_SHAPES:
        M, N, K = shape
        a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
        out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
        assert cuda_reference.matmul(a, b, kernel, out=out, **params) is out
        torch.cuda.synchronize()
        assert rel_err(out, a, b) < HALF_BOUND[dtype], shape
        fresh = cuda_reference.matmul(a, b, kernel, **params)
        assert fresh.dtype == dtype and torch.equal(fresh, out), shape


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_tensor_core_unaligned_pointers_take_the_scalar_path(dtype):
    """K and N are multiples of 8, but the operands start 2 bytes off a 16-byte boundary and C
    2 bytes off a 4-byte one: the 16-byte copies and paired stores must give way to scalar ones."""
    M, N, K = 97, 136, 264
    a = torch.randn(M * K + 1, device="cuda").to(dtype)[1:].view(M, K)
    b = torch.randn(K * N + 1, device="cuda").to(dtype)[1:].view(K, N)
    out = torch.empty(M * N + 1, dtype=dtype, device="cuda")[1:].view(M, N)
    # both operands off, then one aligned and the other not (each operand takes its own path)
    for x, y, case in ((a, b, "both off"), (a.clone(), b, "a aligned"), (a, b.clone(), "b aligned")):
        for kernel, params in filter(lambda v: runs_on(v[0]), HALF_VARIANTS):
            if KERNELS[kernel].tma:  # TMA cannot read these rows: refused, with the fix
                with pytest.raises(ValueError, match="through TMA"):
                    cuda_reference.matmul(x, y, kernel, out=out, **params)
                continue
            out.fill_(float("nan"))
            cuda_reference.matmul(x, y, kernel, out=out, **params)
            assert rel_err(out, a, b) < HALF_BOUND[dtype], (kernel, params, case)
    # C may sit anywhere: the TMA steps store it from registers, 2 bytes at a time when it is off
    # (step 16 falls back from its TMA stores to those from registers)
    x, y = a.clone(), b.clone()
    for kernel, params in filter(lambda v: runs_on(v[0]), TMA_VARIANTS):
        out.fill_(float("nan"))
        cuda_reference.matmul(x, y, kernel, out=out, **params)
        assert rel_err(out, a, b) < HALF_BOUND[dtype], (kernel, params)
        assert torch.equal(out, cuda_reference.matmul(x, y, "wgmma")), (kernel, params)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_tma_kernels_refuse_unaligned_shapes(dtype):
    """K or N not a multiple of 8: steps 13-16 raise before launching, and leave `out` alone."""
    for kernel in filter(runs_on, TMA_KERNELS):
        for M, N, K in ((7, 13, 5), (33, 64, 31), (64, 60, 64)):
            a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
            out = torch.full((M, N), 7.0, dtype=dtype, device="cuda")
            with pytest.raises(ValueError, match="through TMA"):
                cuda_reference.matmul(a, b, kernel, out=out)
            assert bool((out == 7).all())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_tma_kernels_match_step_12_bit_for_bit(dtype):
    """Steps 13-16 issue step 12's wgmma on the same shared-memory layout in the same order, with
    zeros where step 12 has zeros, and round C the same way (step 16 through its staging boxes
    and TMA stores): the results are identical, bit for bit, including a grid of many tiles per
    persistent cluster."""
    if not runs_on("wgmma"):
        pytest.skip("needs compute capability 9.0")
    for M, N, K in ((130, 264, 520), (1000, 1032, 136), (2200, 2056, 24)):
        a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
        want = cuda_reference.matmul(a, b, "wgmma")
        for kernel, params in TMA_VARIANTS:
            got = cuda_reference.matmul(a, b, kernel, **params)
            assert torch.equal(got, want), (kernel, params, (M, N, K), (got != want).sum().item())


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, params", PERSISTENT_VARIANTS, ids=lambda v: str(v))
@pytest.mark.parametrize("clusters", ["1", "2", "7"])
def test_persistent_walks_many_tiles_per_cluster(monkeypatch, clusters, kernel, params):
    """Steps 15 and 16 on a capped grid (CUDA_REFERENCE_MAX_CLUSTERS): each cluster walks many
    tiles, the ring and its barrier phases running on across them (step 16: its staging boxes
    rewritten tile after tile), pair tiles half below M included."""
    if not runs_on(kernel):
        pytest.skip("needs compute capability 9.0")
    monkeypatch.setenv("CUDA_REFERENCE_MAX_CLUSTERS", clusters)
    for M, N, K in ((300, 520, 136), (1000, 1032, 72), (384, 264, 1000)):
        for dtype in (torch.float16, torch.bfloat16):
            a, b = torch.randn(M, K, device="cuda").to(dtype), torch.randn(K, N, device="cuda").to(dtype)
            out = torch.full((M, N), float("nan"), dtype=dtype, device="cuda")
            cuda_reference.matmul(a, b, kernel, out=out, **params)
            assert rel_err(out, a, b) < HALF_BOUND[dtype], (clusters, (M, N, K), dtype)
            assert torch.equal(out, cuda_reference.matmul(a, b, "wgmma")), (clusters, (M, N, K), dtype)


@pytest.mark.gpu
def test_tensor_core_empty_and_zero_k():
    for kernel in filter(runs_on, ("wmma", "mma_sync", "cp_async", "wgmma", *TMA_KERNELS)):
        half = dict(device="cuda", dtype=torch.float16)
        z = cuda_reference.matmul(torch.randn(3, 0, **half), torch.randn(0, 4, **half), kernel)
        assert z.dtype == torch.float16 and torch.equal(z, torch.zeros(3, 4, **half))
        bf16 = dict(device="cuda", dtype=torch.bfloat16)
        e = cuda_reference.matmul(torch.randn(0, 5, **bf16), torch.randn(5, 4, **bf16), kernel)
        assert e.shape == (0, 4) and e.dtype == torch.bfloat16


@pytest.mark.gpu
def test_tensor_core_out_must_match_the_dtype():
    a = torch.randn(8, 8, device="cuda").half()
    with pytest.raises(ValueError, match="contiguous float16 tensor"):
        cuda_reference.matmul(a, a, "mma_sync", out=torch.empty(8, 8, device="cuda"))


@pytest.mark.gpu
@pytest.mark.multigpu
def test_tensor_core_kernels_on_another_device():
    """Operands on cuda:1 while cuda:0 is current: the launch (and the shared-memory opt-in of
    the cp.async kernels, which is per device) happens on cuda:1."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA GPUs")
    torch.cuda.set_device(0)
    a = torch.randn(130, 72, device="cuda:1").bfloat16()
    b = torch.randn(72, 264, device="cuda:1").bfloat16()
    for kernel, params in filter(lambda v: runs_on(v[0], "cuda:1"), HALF_VARIANTS):
        for _ in range(2):  # the second launch finds cuda:1 already opted in
            out = cuda_reference.matmul(a, b, kernel, **params)
            assert out.device == torch.device("cuda:1") and rel_err(out, a, b) < 1e-2, (kernel, params)
    a0, b0 = a.to("cuda:0"), b.to("cuda:0")
    out = cuda_reference.matmul(a0, b0, "cp_async")  # and cuda:0 opts in on its own
    assert out.device == torch.device("cuda:0") and rel_err(out, a0, b0) < 1e-2
    assert torch.cuda.current_device() == 0


@pytest.mark.gpu
def test_unaligned_pointers_take_the_scalar_path():
    """Sliced rows start off 16-byte boundaries: the float4 kernels must not fault or misread."""
    buf = torch.randn(97 * 131 + 1, device="cuda")
    a = buf[1:1 + 97 * 131].view(97, 131)
    b = torch.randn(131, 50, device="cuda")
    for kernel, params in [("vectorized", {}), ("warptile", {})] + [v for v in FP32_VARIANTS if v[0] == "warptile_tuned"]:
        assert rel_err(cuda_reference.matmul(a, b, kernel, **params), a, b) < 1e-5, (kernel, params)


@pytest.mark.gpu
def test_empty_and_zero_k():
    z = cuda_reference.matmul(torch.randn(3, 0, device="cuda"), torch.randn(0, 4, device="cuda"), "warptile")
    assert torch.equal(z, torch.zeros(3, 4, device="cuda"))


@pytest.mark.nvcc
@pytest.mark.skipif(HAS_GPU, reason="the GPU tests build and run the same sources")
@pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")), reason="no nvcc")
def test_compile_all_kernels_without_a_gpu(tmp_path, monkeypatch):
    """Every kernel compiles through load_inline for sm_90 here; nothing runs."""
    monkeypatch.setenv("CUDA_HOME", os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    import torch.utils.cpp_extension as ext
    monkeypatch.setattr(ext, "CUDA_HOME", os.environ["CUDA_HOME"])
    from cuda_reference import build
    build.load.cache_clear()
    module = build.load()
    assert set(module.names()) == set(build.LAUNCHERS) | set(build.LAUNCHERS16)
    built = list(tmp_path.rglob("*.so"))
    assert built, "load_inline produced no shared object"
    build.load.cache_clear()
    # Step 12's kernels hold wgmma (SASS HGMMA), not the empty or trapping body that a build
    # without the sm_90a feature macro would give (wgmma.cuh, 12_wgmma.cu).
    cuobjdump = shutil.which("cuobjdump") or shutil.which(os.path.join(os.environ["CUDA_HOME"], "bin", "cuobjdump"))
    if cuobjdump and "9.0" in os.environ["TORCH_CUDA_ARCH_LIST"]:
        sass = subprocess.run([cuobjdump, "-sass", str(built[0])], capture_output=True, text=True)
        if sass.returncode != 0 and "nvdisasm" in sass.stderr:
            return  # cuobjdump without its disassembler: no SASS to read
        assert sass.returncode == 0, sass.stderr
        assert "HGMMA" in sass.stdout, "no wgmma in the sm_90a code"
        # steps 13-16: TMA loads, step 15's multicast, steps 14-16's register reallocation, step 16's TMA stores
        for op in ("UTMALDG.2D", "UTMALDG.2D.MULTICAST", "USETMAXREG.DEALLOC", "USETMAXREG.TRY_ALLOC", "UTMASTG"):
            assert op in sass.stdout, f"no {op} in the sm_90a code"


def test_compiler_errors_reach_the_user(tmp_path, monkeypatch):
    """A broken source fails with nvcc's own message, not a bare 'build failed'."""
    if HAS_GPU is False and not os.path.exists("/usr/local/cuda/bin/nvcc"):
        pytest.skip("no nvcc")
    from torch.utils.cpp_extension import load_inline
    monkeypatch.setenv("CUDA_HOME", os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0"))
    import torch.utils.cpp_extension as ext
    monkeypatch.setattr(ext, "CUDA_HOME", os.environ["CUDA_HOME"])
    with pytest.raises(RuntimeError) as info:
        load_inline(name="tritonmm_broken", cpp_sources=["int f();"], cuda_sources=["__global__ void k() { oops; }"],
                    build_directory=str(tmp_path), no_implicit_headers=True, with_cuda=True)
    assert "oops" in str(info.value) and "undefined" in str(info.value)
