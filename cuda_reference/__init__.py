"""cuda_reference: the thread-level side of tiling, as a ladder of raw CUDA GEMM kernels.

    import cuda_reference
    c = cuda_reference.matmul(a, b, kernel="tiled", tile=32)

    c16 = cuda_reference.matmul(a.bfloat16(), b.bfloat16(), kernel="cp_async")

Each step of the ladder is one file in kernels/, opening with what it changes and why;
KERNELS describes them. All take row-major operands of any M, N, K. Steps 1-8 are fp32 on
CUDA cores; steps 9 to 16 use tensor cores and take fp16 or bf16 (accumulated in fp32, the
result in the inputs' dtype); steps 12 to 16 (Hopper's wgmma, then TMA, warp specialization,
a persistent clustered grid, TMA stores) run only on compute capability 9.0, and steps 13 to
16 read A and B through TMA, which needs every row 16-byte aligned (K and N multiples of 8,
aligned data pointers): other layouts are refused with the fix. Step 17 returns to fp32: the
warp tile of steps 7-8 laid out and sized for the H100, in several built variants.
emulate.py replays the index math of steps 10 to 17 on the CPU; sanitize.py runs every
kernel under compute-sanitizer.
"""
from typing import NamedTuple

import torch

FP32 = (torch.float32,)
HALF = (torch.float16, torch.bfloat16)


class KernelInfo(NamedTuple):
    step: int
    file: str
    description: str
    params: dict  # parameter -> allowed values (the first is the default)
    tile: str  # what one block owns, for tables
    dtypes: tuple = FP32  # the input (and output) dtypes it is built for
    capability: tuple | None = None  # the one compute capability it runs on (None: any)
    tma: bool = False  # reads A and B through TMA: rows must start 16-byte aligned


KERNELS = {
    "naive": KernelInfo(1, "01_naive.cu", "one thread per C element, operands from global memory, uncoalesced",
                        {}, "1x1"),
    "coalesced": KernelInfo(2, "02_coalesced.cu", "as naive, threadIdx.x along a row of C: coalesced loads",
                            {}, "1x1"),
    "tiled": KernelInfo(3, "03_tiled.cu", "the classic kernel: TILE x TILE __shared__ tiles, two __syncthreads per K step",
                        {"tile": (32, 16, 8)}, "TxT"),
    "blocktile_1d": KernelInfo(4, "04_blocktile_1d.cu", "64x64 block tile, 8 results per thread down a column",
                               {}, "64x64"),
    "blocktile_2d": KernelInfo(5, "05_blocktile_2d.cu", "128x128 block tile, an 8x8 register tile per thread",
                               {}, "128x128"),
    "vectorized": KernelInfo(6, "06_vectorized.cu", "as blocktile_2d with float4 loads, A transposed in shared memory",
                             {}, "128x128"),
    "warptile": KernelInfo(7, "07_warptile.cu", "block, warp and thread tiles: 128x128 blocks, 64-row warp tiles",
                           {"threads": (128, 256)}, "128x128"),
    "double_buffer": KernelInfo(8, "08_double_buffer.cu", "warptile (256 threads) with two shared-memory slices: the "
                                "next slice's global loads overlap this slice's arithmetic", {"blocks_per_sm": (2, 1)}, "128x128"),
    "wmma": KernelInfo(9, "09_wmma.cu", "tensor cores through nvcuda::wmma: 16x16x16 fragments, 128x128x32 blocks, "
                       "8 warps of 64x32", {}, "128x128", HALF),
    "mma_sync": KernelInfo(10, "10_mma_sync.cu", "as wmma with inline-PTX ldmatrix + mma.sync.m16n8k16, C stored "
                           "from registers", {}, "128x128", HALF),
    "cp_async": KernelInfo(11, "11_cp_async.cu", "multi-stage cp.async pipeline, 64x64 warp tiles, grouped block "
                           "order; tile = BMxBNxBK", {"tile": ("128x256x64", "128x256x32", "128x128x32")},
                           "128x256 or 128x128", HALF),
    "wgmma": KernelInfo(12, "12_wgmma.cu", "Hopper warpgroup MMA (wgmma.mma_async m64n256k16) from 128-byte-swizzled "
                        "shared memory, 128x256x64 blocks of two warpgroups, 4-stage cp.async ring; sm_90a only",
                        {}, "128x256", HALF, (9, 0)),
    "tma": KernelInfo(13, "13_tma.cu", "as wgmma with TMA loads (cp.async.bulk.tensor, 128-byte swizzle) issued by one "
                      "thread and completing on an mbarrier per stage; rows 16-byte aligned; sm_90a only",
                      {}, "128x256", HALF, (9, 0), tma=True),
    "warp_specialized": KernelInfo(14, "14_warp_specialized.cu", "a producer warpgroup issuing TMA, two consumer "
                                   "warpgroups of wgmma, full/empty mbarriers per stage, setmaxnreg 40/232; rows "
                                   "16-byte aligned; sm_90a only", {}, "128x256", HALF, (9, 0), tma=True),
    "persistent": KernelInfo(15, "15_persistent.cu", "warp_specialized on a persistent grid of 2x1 clusters walking "
                             "tiles in grouped order, B multicast to both CTAs by TMA; rows 16-byte aligned; sm_90a "
                             "only", {}, "128x256", HALF, (9, 0), tma=True),
    "tma_store": KernelInfo(16, "16_tma_store.cu", "persistent with the epilogue through shared memory: accumulators "
                            "written as 128-byte-swizzled 64 x 64 boxes and stored by TMA (cp.async.bulk.tensor) "
                            "while the next tile's products run; stages=4 (two staging boxes per warpgroup) or 3 "
                            "(four); rows of A and B 16-byte aligned; sm_90a only", {"stages": (4, 3)}, "128x256",
                            HALF, (9, 0), tma=True),
    "warptile_tuned": KernelInfo(17, "17_warptile_tuned.cu", "fp32 again: double_buffer's pipeline with a "
                                 "conflict-free interleaved warp tile (4 x 4 sub-blocks, float4 shared loads) and "
                                 "sizes for the H100; config = BMxBNxBK_threads, _g8: tiles in groups of 8 rows, _4x2: "
                                 "warps 4 down, 2 across", {"config": (
                                     "128x128x8_256t", "128x128x16_256t", "128x256x8_256t", "256x128x8_256t",
                                     "128x128x8_128t", "128x256x16_256t", "256x128x16_256t", "128x256x8_256t_g8",
                                     "128x256x16_256t_g8", "128x256x16_256t_4x2")}, "BMxBN"),
}

# The launcher's dtype code for the 16-bit kernels (build.py's run16).
_DTYPE_CODE = {torch.float16: 0, torch.bfloat16: 1}


def launcher_name(kernel: str, params: dict) -> str:
    """Checks kernel and params against KERNELS; returns the launcher's name in the extension."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    info = KERNELS[kernel]
    unknown = set(params) - set(info.params)
    if unknown:
        allowed = ", ".join(info.params) or "none"
        raise ValueError(f"kernel {kernel!r} takes no parameter {sorted(unknown)}; its parameters: {allowed}")
    name = kernel
    for param, allowed in info.params.items():
        value = params.get(param, allowed[0])
        if value not in allowed:
            raise ValueError(f"{param}={value!r} is not built for kernel {kernel!r}; choose one of {allowed}")
        name += f"_{value}"
    return name


def runs_on(kernel: str, device=None) -> bool:
    """Whether `kernel` can run on a CUDA device (default: the current one)."""
    need = KERNELS[kernel].capability
    return need is None or (torch.cuda.is_available() and torch.cuda.get_device_capability(device) == need)


def _refusal(kernel, device):
    """Why `kernel` cannot run on `device` (which runs_on refused), and what to do instead."""
    info = KERNELS[kernel]
    need = "{}.{}".format(*info.capability)
    have = ("compute capability {}.{}".format(*torch.cuda.get_device_capability(device))
            if torch.cuda.is_available() else "not available (no CUDA)")
    # the fix: a GPU it runs on, or the highest step of the same dtypes that runs on any GPU
    other = max((k for k, i in KERNELS.items() if i.capability is None and i.dtypes == info.dtypes),
                key=lambda k: KERNELS[k].step)
    return (f"kernel {kernel!r} runs only on compute capability {need} GPUs (its instructions are "
            f"sm_{need.replace('.', '')}a-only); {device} is {have}. Run it on a compute capability {need} GPU, "
            f"or use kernel={other!r} (step {KERNELS[other].step}) on this one")


def _dtype_fix(name, dtypes):
    """'float32: a.float()' or 'float16 or bfloat16: a.half() or a.bfloat16()'."""
    short = {torch.float32: "float", torch.float16: "half", torch.bfloat16: "bfloat16"}
    return (" or ".join(str(d).removeprefix("torch.") for d in dtypes) + ": " +
            " or ".join(f"{name}.{short[d]}()" for d in dtypes))


def _check(a, b, out, kernel):
    dtypes = KERNELS[kernel].dtypes
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 2:
            raise ValueError(f"{name} must be 2-D, got shape {tuple(t.shape)}")
        if t.dtype not in dtypes:
            raise TypeError(f"{name} is {t.dtype}; CUDA reference kernel {kernel!r} needs {_dtype_fix(name, dtypes)}")
    if a.dtype != b.dtype:
        raise TypeError(f"a is {a.dtype} but b is {b.dtype}; the kernels take both in one dtype: b.to(a.dtype)")
    for name, t in (("a", a), ("b", b)):
        if t.device.type != "cuda":
            raise ValueError(f"{name} is on {t.device}; the CUDA reference kernels need CUDA tensors: {name}.cuda()")
        if not t.is_contiguous():
            raise ValueError(f"{name} is not contiguous (strides {t.stride()}); the kernels read row-major "
                             f"memory: pass {name}.contiguous()")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"inner dimensions differ: a is {tuple(a.shape)}, b is {tuple(b.shape)}")
    if a.device != b.device:
        raise ValueError(f"a is on {a.device} but b is on {b.device}")
    if not runs_on(kernel, a.device):
        raise RuntimeError(_refusal(kernel, a.device))
    if KERNELS[kernel].tma and a.numel() and b.numel():  # (an empty product launches nothing)
        _check_tma_rows(a, b, kernel)
    if out is not None:
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"out must be a torch.Tensor or None, got {type(out).__name__}")
        shape = (a.shape[0], b.shape[1])
        if tuple(out.shape) != shape or out.dtype != a.dtype or out.device != a.device or not out.is_contiguous():
            raise ValueError(f"out must be a contiguous {str(a.dtype).removeprefix('torch.')} tensor of shape "
                             f"{shape} on {a.device}; got {out.dtype} {tuple(out.shape)} on {out.device}, "
                             f"strides {out.stride()}")


def check_operands(a, b, kernel: str) -> None:
    """Raises the TypeError or ValueError (or RuntimeError, for a GPU the kernel does not run on) that
    matmul(a, b, kernel) would raise for its operands, before anything is built or launched."""
    _check(a, b, None, kernel)


def _check_tma_rows(a, b, kernel):
    """TMA addresses a matrix by its base and row pitch, both multiples of 16 bytes: K and N
    multiples of 8 (16-bit elements) and 16-byte aligned data pointers."""
    K, N = a.shape[1], b.shape[1]
    off = {name: t.data_ptr() % 16 for name, t in (("a", a), ("b", b))}
    if K % 8 == 0 and N % 8 == 0 and not any(off.values()):
        return
    wrong = [f"{d}={v} is not a multiple of 8" for d, v in (("K", K), ("N", N)) if v % 8] + \
            [f"{name}'s data starts {o} bytes past a 16-byte boundary" for name, o in off.items() if o]
    raise ValueError(f"kernel {kernel!r} (step {KERNELS[kernel].step}) reads a and b through TMA, which needs every "
                     f"row to start on a 16-byte boundary (K and N multiples of 8, 16-byte aligned data); "
                     f"here {', '.join(wrong)}. Pad K and N up to multiples of 8 with zeros (torch.nn.functional.pad) "
                     f"into fresh tensors, or use kernel='wgmma' (step 12), which takes any layout")


def matmul(a: torch.Tensor, b: torch.Tensor, kernel: str = "tiled", *, out=None, **params) -> torch.Tensor:
    """C = a @ b with one kernel of the ladder. a, b: contiguous CUDA tensors of a dtype the
    kernel takes (KERNELS[kernel].dtypes: float32 for steps 1-8, float16 or bfloat16 after);
    the result has the same dtype."""
    name = launcher_name(kernel, params)
    _check(a, b, out, kernel)
    from .build import load
    ext = load()
    M, K = a.shape
    N = b.shape[1]
    if out is None:
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    with torch.cuda.device(a.device):
        stream = torch.cuda.current_stream().cuda_stream
        if a.dtype == torch.float32:
            ext.run(name, M, N, K, a.data_ptr(), b.data_ptr(), out.data_ptr(), stream)
        else:
            ext.run16(name, M, N, K, a.data_ptr(), b.data_ptr(), out.data_ptr(), _DTYPE_CODE[a.dtype], stream)
    return out
