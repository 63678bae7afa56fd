"""The CUDA ladder: every kernel against float64 on the GPU; on the CPU, a compile-only build."""
import os
import shutil

import pytest
import torch
from conftest import HAS_GPU, rel_err

import cuda_reference
from cuda_reference import KERNELS, launcher_name

VARIANTS = [(k, {p: v}) for k, info in KERNELS.items() for p, vals in info.params.items() for v in vals] + \
           [(k, {}) for k, info in KERNELS.items() if not info.params]
SHAPES = [(1, 1, 1), (7, 13, 5), (33, 65, 31), (127, 129, 257), (130, 67, 200), (256, 256, 256), (300, 4, 1001)]


def test_registry_matches_the_build():
    from cuda_reference.build import LAUNCHERS, KERNEL_DIR
    names = {launcher_name(k, p) for k, p in VARIANTS}
    assert names == set(LAUNCHERS)
    for info in KERNELS.values():
        assert (KERNEL_DIR / info.file).exists()
        assert (KERNEL_DIR / info.file).read_text().startswith("// Step ")


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


@pytest.mark.gpu
def test_non_contiguous_is_refused():
    a = torch.randn(8, 8, device="cuda")
    with pytest.raises(ValueError, match="contiguous"):
        cuda_reference.matmul(a.T, a)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, params", VARIANTS, ids=lambda v: str(v))
def test_every_kernel_against_float64(kernel, params):
    for shape in SHAPES:
        M, N, K = shape
        a, b = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
        out = torch.full((M, N), float("nan"), device="cuda")
        cuda_reference.matmul(a, b, kernel, out=out, **params)
        torch.cuda.synchronize()
        assert rel_err(out, a, b) < 1e-5, shape


@pytest.mark.gpu
def test_unaligned_pointers_take_the_scalar_path():
    """Sliced rows start off 16-byte boundaries: the float4 kernels must not fault or misread."""
    buf = torch.randn(97 * 131 + 1, device="cuda")
    a = buf[1:1 + 97 * 131].view(97, 131)
    b = torch.randn(131, 50, device="cuda")
    for kernel in ("vectorized", "warptile"):
        assert rel_err(cuda_reference.matmul(a, b, kernel), a, b) < 1e-5


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
    assert set(module.names()) == set(build.LAUNCHERS)
    built = list(tmp_path.rglob("*.so"))
    assert built, "load_inline produced no shared object"
    build.load.cache_clear()


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
