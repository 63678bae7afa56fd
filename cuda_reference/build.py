"""Builds every kernel of the ladder into one extension with torch's load_inline.

The .cu files include no torch header: their launchers take raw pointers, and the only
C++ that sees Python is the small pybind11 shim below, so nvcc compiles just the kernels
(torch's headers are most of a typical extension's build time). torch caches the build
under $TORCH_EXTENSIONS_DIR (default ~/.cache/torch_extensions), keyed by a hash of the
sources and flags: a second process loads it in about a second, and any change to a .cu
file rebuilds it. A compiler error raises RuntimeError carrying nvcc's own message.

Two launcher tables: the fp32 steps (LAUNCHERS, run) take float pointers; the tensor-core
steps (LAUNCHERS16, run16) take untyped pointers and an int naming the 16-bit format
(0 fp16, 1 bf16), each launcher holding both instantiations of its kernel.

Steps 12 to 16 use wgmma (and 14-16 setmaxnreg, 15-16 TMA multicast), which exist only in
sm_90a code (the "a" marks features that later GPUs do not keep). arch_flags() takes
torch's gencode list for the targeted GPUs and compiles 9.0 as 9.0a instead of beside it:
with both an sm_90 and an sm_90a cubin in the binary it would be up to the loader which one
an H100 runs, and in the sm_90 one those steps are empty kernels. CUDA_REFERENCE_SM90A tells
the launchers that the sm_90a code exists. Steps 13 to 16 build TMA tensor maps on the host
with the driver's cuTensorMapEncodeTiled, reached through cudaGetDriverEntryPoint: no -lcuda.
"""
import functools
import hashlib
import os
from pathlib import Path

KERNEL_DIR = Path(__file__).parent / "kernels"
EXTENSION_NAME = "tritonmm_cuda_reference"

# Every fp32 launcher the .cu files define (steps 1-8 and 17), by the name the Python side asks for.
LAUNCHERS = ["naive", "coalesced", "tiled_8", "tiled_16", "tiled_32", "blocktile_1d", "blocktile_2d",
             "vectorized", "warptile_128", "warptile_256", "double_buffer_2",
             "double_buffer_1", "warptile_tuned_128x128x8_256t", "warptile_tuned_128x128x16_256t",
             "warptile_tuned_128x256x8_256t", "warptile_tuned_256x128x8_256t", "warptile_tuned_128x128x8_128t",
             "warptile_tuned_128x256x16_256t", "warptile_tuned_256x128x16_256t", "warptile_tuned_128x256x8_256t_g8",
             "warptile_tuned_128x256x16_256t_g8",
             "warptile_tuned_128x256x16_256t_4x2"]
# The 16-bit (fp16 / bf16) launchers, steps 9 to 16.
LAUNCHERS16 = ["wmma", "mma_sync", "cp_async_128x256x64", "cp_async_128x256x32", "cp_async_128x128x32", "wgmma",
               "tma", "warp_specialized", "persistent", "tma_store_4", "tma_store_3"]

_BINDINGS = r"""
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using Launcher = cudaError_t (*)(int, int, int, const float*, const float*, float*, cudaStream_t);
using Launcher16 = cudaError_t (*)(int, int, int, const void*, const void*, void*, int, cudaStream_t);
%(declarations)s
static const std::vector<std::pair<std::string, Launcher>> kLaunchers = {%(table)s};
static const std::vector<std::pair<std::string, Launcher16>> kLaunchers16 = {%(table16)s};

// Launches one kernel on the given stream; raises with CUDA's error string if the launch fails.
void run(const std::string& name, int M, int N, int K, std::uintptr_t a, std::uintptr_t b, std::uintptr_t c,
         std::uintptr_t stream) {
  for (const auto& entry : kLaunchers) {
    if (entry.first != name) continue;
    cudaError_t err = entry.second(M, N, K, reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b),
                                   reinterpret_cast<float*>(c), reinterpret_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) throw std::runtime_error(name + ": " + cudaGetErrorString(err));
    return;
  }
  throw std::invalid_argument("no CUDA reference kernel named " + name);
}

// The same for the 16-bit kernels; dtype 0 is fp16, 1 bf16 (A, B and C all of it).
void run16(const std::string& name, int M, int N, int K, std::uintptr_t a, std::uintptr_t b, std::uintptr_t c,
           int dtype, std::uintptr_t stream) {
  if (dtype != 0 && dtype != 1) throw std::invalid_argument("dtype must be 0 (fp16) or 1 (bf16)");
  for (const auto& entry : kLaunchers16) {
    if (entry.first != name) continue;
    cudaError_t err = entry.second(M, N, K, reinterpret_cast<const void*>(a), reinterpret_cast<const void*>(b),
                                   reinterpret_cast<void*>(c), dtype, reinterpret_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) throw std::runtime_error(name + ": " + cudaGetErrorString(err));
    return;
  }
  throw std::invalid_argument("no 16-bit CUDA reference kernel named " + name);
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& entry : kLaunchers) out.push_back(entry.first);
  for (const auto& entry : kLaunchers16) out.push_back(entry.first);
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run", &run, "launch an fp32 kernel: run(name, M, N, K, a_ptr, b_ptr, c_ptr, stream)");
  m.def("run16", &run16, "launch a 16-bit kernel: run16(name, M, N, K, a_ptr, b_ptr, c_ptr, dtype, stream)");
  m.def("names", &names, "the kernels this build holds");
}
"""


def sources():
    """(the C++ shim, the concatenated .cu files in ladder order)."""
    decls = "\n".join(f"cudaError_t launch_{n}(int, int, int, const float*, const float*, float*, cudaStream_t);"
                      for n in LAUNCHERS)
    decls += "\n" + "\n".join(f"cudaError_t launch_{n}(int, int, int, const void*, const void*, void*, int, "
                               "cudaStream_t);" for n in LAUNCHERS16)
    table = ", ".join(f'{{"{n}", launch_{n}}}' for n in LAUNCHERS)
    table16 = ", ".join(f'{{"{n}", launch_{n}}}' for n in LAUNCHERS16)
    # torch rebuilds when the source strings change; the headers are included, not passed,
    # so their hash goes into the shim to make a header edit rebuild too.
    headers = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(KERNEL_DIR.glob("*.cuh")))).hexdigest()
    cpp = f"// kernels/*.cuh sha256 {headers}\n" + _BINDINGS % dict(declarations=decls, table=table, table16=table16)
    cuda = "\n".join(p.read_text() for p in sorted(KERNEL_DIR.glob("[0-9][0-9]_*.cu")))
    return cpp, cuda


def arch_flags():
    """torch's -gencode flags for TORCH_CUDA_ARCH_LIST (else the visible GPUs), with sm_90
    compiled as sm_90a, plus -DCUDA_REFERENCE_SM90A when sm_90a code is built. Passing any
    arch flag makes load_inline add none of its own."""
    try:
        from torch.utils.cpp_extension import _get_cuda_arch_flags
    except ImportError:  # a torch without it: its own choice, and no step 12
        return []
    flags = ["-gencode=arch=compute_90a,code=sm_90a" if f == "-gencode=arch=compute_90,code=sm_90" else f
             for f in _get_cuda_arch_flags()]
    if any("code=sm_90a" in f for f in flags):
        flags.append("-DCUDA_REFERENCE_SM90A")
    return sorted(set(flags))


@functools.lru_cache(maxsize=None)
def load(verbose: bool = False):
    """Builds (or loads the cached build of) the extension for the visible GPU's architecture.
    Without a GPU, set TORCH_CUDA_ARCH_LIST (e.g. 9.0) to compile for a chosen one."""
    from torch.utils.cpp_extension import load_inline

    cpp, cuda = sources()
    return load_inline(
        name=EXTENSION_NAME, cpp_sources=[cpp], cuda_sources=[cuda], with_cuda=True,
        no_implicit_headers=True,  # the sources include what they use; no torch/extension.h
        extra_include_paths=[str(KERNEL_DIR)],
        extra_cflags=["-O3"], extra_cuda_cflags=["-O3", "-lineinfo", *arch_flags()],
        verbose=verbose or bool(os.environ.get("TRITONMM_VERBOSE_BUILD")),
    )
