"""The tile spaces, their pruning and the no-tuning heuristic."""
import torch

from tritonmm import config_space as cs

H100_SMEM = 232448


def test_every_config_fits_an_h100_on_both_paths():
    for fam in ("16bit", "tf32", "ieee"):
        size = 2 if fam == "16bit" else 4
        for cfg in cs.space(fam):
            assert cs.smem_bytes(cfg, size, tma=True) <= H100_SMEM, (fam, cfg)


def test_smem_estimate():
    cfg = cs.make_config(128, 256, 64, 3, 8)
    assert cs.smem_bytes(cfg, 2, tma=False) == 3 * (128 + 256) * 64 * 2 + 1024
    assert cs.smem_bytes(cfg, 2, tma=True) == 3 * (128 + 256) * 64 * 2 + 128 * 128 * 2 + 1024


def test_prune_drops_what_does_not_fit():
    space = cs.space("16bit")
    kept, dropped = cs.prune(space, 4096, 4096, 4096, 2, 100_000, tma=True)
    assert all(cs.smem_bytes(c, 2, True) <= 100_000 for c in kept)
    assert dropped["shared memory"] == len(space) - len(kept) > 0


def test_prune_drops_oversized_blocks_for_small_shapes():
    kept, dropped = cs.prune(cs.space("16bit"), 16, 4096, 4096, 2, H100_SMEM, tma=True)
    assert kept and all(c.kwargs["BLOCK_M"] == 64 for c in kept)
    assert dropped.get("BLOCK_M > 64", 0) > 0
    kept, _ = cs.prune(cs.space("16bit"), 4096, 4096, 4096, 2, H100_SMEM, tma=True)
    assert any(c.kwargs["BLOCK_M"] == 128 for c in kept)


def test_prune_always_keeps_one():
    for m, n, k in [(1, 1, 1), (16, 16, 16), (3, 5000, 7)]:
        for fam in ("16bit", "tf32", "ieee"):
            assert cs.prune(cs.space(fam), m, n, k, 4, H100_SMEM, tma=False)[0]


def test_heuristic_gives_every_sm_work_then_large_tiles():
    big = cs.heuristic(8192, 8192, 8192, torch.float16, "native", 132, 2, H100_SMEM, True)
    assert big.kwargs["BLOCK_M"] * big.kwargs["BLOCK_N"] == 128 * 256
    small = cs.heuristic(16, 4096, 4096, torch.float16, "native", 132, 2, H100_SMEM, True)
    assert small.kwargs["BLOCK_M"] == 64
    assert small in cs.configs(torch.float16)


def test_bucket():
    assert [cs.bucket(n) for n in (1, 16, 17, 100, 128, 129, 4096, 14336)] == [16, 16, 32, 128, 128, 256, 4096, 16384]


def test_family():
    assert cs.family(torch.bfloat16, "native") == "16bit"
    assert cs.family(torch.float32, "ieee") == "ieee"
    assert cs.family(torch.float32, "tf32") == "tf32"


def test_smem_estimate_counts_a_matrix_bias_tile():
    cfg = cs.make_config(128, 256, 64, 4, 8)
    plain = cs.smem_bytes(cfg, 2, tma=True)
    assert cs.smem_bytes(cfg, 2, tma=True, matrix_bias=True) == plain + 128 * 256 * 2
    kept, _ = cs.prune([cfg], 4096, 4096, 4096, 2, H100_SMEM, tma=True, matrix_bias=True)
    assert plain <= H100_SMEM and not kept  # 4-stage 128x256 fits without the bias tile, not with it
