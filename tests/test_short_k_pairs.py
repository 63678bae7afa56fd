"""Two programs an SM for short K (design.md: short-k-pairs): where the default config is default_config.PAIRED
(128x128x64 tiles, 3 stages, PER_SM=2) and where not, what it launches, and that it runs right against float64."""
import pytest
import torch
from conftest import rel_err
from test_cost_model import H200, _plan

import tritonmm
from tritonmm import config_space, default_config, thresholds, validation
from tritonmm import device as devices

PAIRED = config_space.as_list(default_config.PAIRED)


@pytest.fixture
def h200(monkeypatch):
    monkeypatch.setattr(devices, "facts", lambda d: H200)


def test_the_default_pairs_short_k_products_in_place_of_narrower_tiles_and_wave_tails(h200):
    # Measured (x @ W.T planned as a CUDA graph plans it): K of 288-768, where the default without pairs takes a
    # wave-tail split (the first three) or a tile of fewer than 128 rows (the last two: 64x128)
    for M, N, K in ((3072, 768, 640), (3968, 576, 288), (940, 2304, 768), (1096, 4288, 744), (5144, 1704, 352)):
        with thresholds.override(pair_max_k=0):
            unpaired = _plan(M, N, K, captured=True).heuristic()
        assert min(unpaired.kwargs["BLOCK_M"], unpaired.kwargs["BLOCK_N"]) < 128 or config_space.tail(unpaired)
        plan = _plan(M, N, K, captured=True)
        assert plan.path == "tma" and config_space.as_list(plan.heuristic()) == PAIRED, (M, N, K)
        assert PAIRED in [config_space.as_list(c) for c in plan.candidates()]  # the tuner times it too
    # Where the default is a whole tile of 128x128 or more (128x256 here), pairs won and lost alike: not paired
    assert config_space.per_sm(_plan(5824, 512, 416, captured=True).heuristic()) == 1
    # Nor a wave-tail split of 128x256 tiles (pair_max_tail_area), which ran faster than the pair on most of those
    # measured. Products that nothing is copied for (not staged), which CPU tensors on a GPU machine could not be.
    for M, N, K in ((2360, 7264, 280), (4160, 5144, 480)):
        plan = _plan(M, N, K, captured=True)
        kept = plan.heuristic()
        assert not plan.staged and config_space.tail(kept) and config_space.as_list(kept)[:2] == [128, 256]
        with thresholds.override(pair_max_tail_area=128 * 256):
            assert config_space.as_list(_plan(M, N, K, captured=True).heuristic()) == PAIRED, (M, N, K)
    # K past pair_max_k; fewer than a wave of tiles (1024x1024: 64); float32 (TF32): never paired, not even tuned
    for M, N, K, dtype in ((3072, 768, 776, torch.bfloat16), (1024, 1024, 512, torch.bfloat16),
                           (3072, 768, 640, torch.float32)):
        plan = _plan(M, N, K, captured=True, dtype=dtype, precision="tf32" if dtype == torch.float32 else None)
        assert config_space.per_sm(plan.heuristic()) == 1, (M, N, K, dtype)
        assert PAIRED not in [config_space.as_list(c) for c in plan.candidates()]
    with thresholds.override(pair_max_k=0):
        assert config_space.per_sm(_plan(3072, 768, 640, captured=True).heuristic()) == 1


def test_few_rows_narrow_products_and_c_through_pointers_are_not_paired(h200):
    """A wave of 128x128 tiles is not enough: an LM head in decode (8 and 32 rows against 50304 columns: its short
    tiles), a product of 64 or 32 columns (128x64 tiles, which prune keeps over 128-wide ones), and C stored through
    pointers (N odd: its epilogue's shared memory is not what smem_bytes counts) keep their default."""
    for M, N, K in ((8, 50304, 768), (32, 50304, 768), (20000, 64, 512), (40000, 32, 256), (3072, 767, 640)):
        plan = _plan(M, N, K, captured=True)
        assert config_space.per_sm(plan.heuristic()) == 1, (M, N, K)
        assert PAIRED not in [config_space.as_list(c) for c in plan.candidates()], (M, N, K)


def test_batches_of_short_k_pair_in_place_of_narrower_tiles(h200):
    """Attention's q @ k.T (head dims of at most pair_batched_max_k; design.md: batched-short-k-pairs): PAIRED in
    place of 64x256 and 128x64 tiles (batches of the fresh draw that kept the rule), eagerly too; whole tiles of
    128x128 and 128x256 keep their place (pairs won and lost alike against 128x128, lost to 128x256 on large
    batches), the tuner timing the pair beside them. K past pair_batched_max_k (a mixture of experts' 768) and
    pair_batched_max_k=0: never paired."""
    for Z, M, K in ((8, 3888, 96), (16, 2320, 96), (32, 2704, 128)):
        for captured in (True, False):
            with thresholds.override(pair_batched_max_k=0):
                unpaired = _plan(M, M, K, captured=captured, Z=Z).heuristic()
            plan = _plan(M, M, K, captured=captured, Z=Z)
            assert plan.path == "tma" and config_space.as_list(unpaired)[:2] == [64, 256], (Z, M, K, captured)
            assert config_space.as_list(plan.heuristic()) == PAIRED, (Z, M, K, captured)
            assert PAIRED in [config_space.as_list(c) for c in plan.candidates()]
    for Z, M, K, tile in ((8, 2384, 128, [128, 128]), (16, 2144, 96, [128, 256]), (32, 3752, 80, [128, 256])):
        plan = _plan(M, M, K, captured=True, Z=Z)
        assert config_space.as_list(plan.heuristic())[:2] == tile and config_space.per_sm(plan.heuristic()) == 1
        assert PAIRED in [config_space.as_list(c) for c in plan.candidates()]
    plan = _plan(680, 3072, 768, captured=True, Z=4)
    assert plan.path == "tma" and config_space.per_sm(plan.heuristic()) == 1
    assert PAIRED not in [config_space.as_list(c) for c in plan.candidates()]


def test_a_batch_counts_its_entries_tiles_toward_the_wave(h200):
    """4x(768x768x128): 36 tiles of 128x128 an entry, 144 in all, a wave of the stand-in's 132 SMs: paired in place
    of its 128x64 default. 2x(1024x1024x128) and 8x(512x512x128): 128 tiles in all, short of a wave, keep 64x256."""
    plan = _plan(768, 768, 128, captured=True, Z=4)
    assert plan.path == "tma" and config_space.as_list(plan.heuristic()) == PAIRED
    for Z, M in ((2, 1024), (8, 512)):
        plan = _plan(M, M, 128, captured=True, Z=Z)
        assert plan.path == "tma" and config_space.as_list(plan.heuristic())[:2] == [64, 256], (Z, M)
        assert PAIRED not in [config_space.as_list(c) for c in plan.candidates()], (Z, M)


def test_pairs_only_where_two_programs_fit_an_sms_shared_memory(monkeypatch):
    need = config_space.smem_bytes(default_config.PAIRED, 2, True)
    for per_sm, paired in ((2 * need, True), (2 * need - 1, False)):
        monkeypatch.setattr(devices, "facts", lambda d, s=per_sm: H200._replace(smem_per_sm=s))
        assert (config_space.per_sm(_plan(3072, 768, 640, captured=True).heuristic()) == 2) == paired


def _tma_device(monkeypatch) -> str:
    """'cuda' where a Hopper runs the TMA kernel (skipped on another GPU), its thresholds as shipped; else 'cpu', the
    interpreter on a stand-in of 2 SMs with the TMA kernel's bars lowered, so that the small products below take it."""
    on = "cuda" if torch.cuda.is_available() else "cpu"
    if on == "cuda" and not devices.facts(torch.device(on)).tma:
        pytest.skip("the TMA kernel needs a Hopper")
    if on == "cpu":
        monkeypatch.setattr(devices, "facts", lambda d: H200._replace(num_sms=2))
        for field in ("tma_min_macs", "few_tiles_per_sm", "tma_min_rows"):
            monkeypatch.setitem(thresholds.OVERRIDES, field, 0)
    return on


def test_a_paired_default_launches_two_programs_an_sm_and_runs_right(monkeypatch):
    """On the GPU where there is one (3900x576x296: 31 rows of tiles, the last clipped, and a part K step), else in
    the interpreter (300x264x200: 9 tiles, 4 programs)."""
    on = _tma_device(monkeypatch)
    M, N, K = (3900, 576, 296) if on == "cuda" else (300, 264, 200)
    plan = _plan(M, N, K, captured=True, on=on)
    cfg = plan.heuristic()
    assert plan.path == "tma" and config_space.as_list(cfg) == PAIRED
    [(kernel, grid, args, constants, _)] = plan.steps(cfg)
    num_sms = plan.facts.num_sms
    tiles = config_space.cdiv(M, 128) * config_space.cdiv(N, 128)
    assert constants["NUM_SMS"] == 2 * num_sms and grid == (min(tiles, 2 * num_sms),)
    plan.run(cfg)
    a, b = plan.given
    assert rel_err(plan.out, a, b) < 1e-2


def test_a_paired_batch_runs_right(monkeypatch):
    """A batch of short K on PAIRED, which paired offers it: on the GPU where there is one (4x(1032x712x96), C's rows
    16-byte aligned, the last row and column of tiles clipped, a part K step), else in the interpreter
    (2x(300x264x72)); programs walk tiles across the entries. Every entry against float64."""
    on = _tma_device(monkeypatch)
    Z, M, N, K = (4, 1032, 712, 96) if on == "cuda" else (2, 300, 264, 72)
    plan = _plan(M, N, K, captured=True, Z=Z, on=on)
    cfg = default_config.PAIRED  # the default here on the stand-in; on a GPU its default may differ
    assert plan.path == "tma" and plan.batched and cfg in default_config.paired(plan)
    [(kernel, grid, args, constants, _)] = plan.steps(cfg)
    assert constants["NUM_SMS"] == 2 * plan.facts.num_sms and constants["BATCH_C"]
    plan.run(cfg)
    a, b = plan.given
    for z in range(Z):
        assert rel_err(plan.out[z], a[z], b[z]) < 1e-2, z


def test_a_pinned_pair_runs_right_on_either_path(path, device, monkeypatch):
    """PER_SM pinned through tritonmm.mm, 400x400 in 16 tiles: on the TMA kernel more than its 2 x SMs programs (the
    interpreter's 4 SMs; on a GPU a stand-in of 4 too, so that programs walk several tiles), the pointer kernel, not
    persistent, ignores it."""
    from tritonmm.product import Product
    monkeypatch.setattr(devices, "facts", lambda d, f=devices.facts: f(d)._replace(num_sms=4))
    a = torch.randn(400, 136, device=device).bfloat16()
    b = torch.randn(136, 400, device=device).bfloat16()
    pinned = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=3, num_warps=4, PER_SM=2)
    out = tritonmm.mm(a, b, config=pinned)
    assert rel_err(out, a, b) < 1e-2
    plan = Product(a, b, torch.empty_like(out), "native")
    [(_, grid, _, constants, _)] = plan.steps(validation.check_config(pinned))
    if path == "tma":
        assert plan.path == "tma" and constants["NUM_SMS"] == 8 and grid == (8,)
    else:
        assert plan.path == "pointer" and grid == (16,)
