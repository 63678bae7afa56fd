"""tritonmm.matmul: torch.mm's semantics on the block programs in kernel.py.

This module decides precision, picks the kernel path (TMA descriptors for large products
whose operands allow it, pointers otherwise), builds the grid and launches. Checks live in
validation.py, tile spaces in config_space.py, tuning and its cache in tuning.py/cache.py.
"""
import functools
from typing import NamedTuple

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from . import config_space, tuning, validation
from .kernel import matmul_kernel, matmul_tma_kernel, transpose_kernel


def torch_uses_tf32() -> bool:
    """Whether torch.mm would run a float32 product on TF32 tensor cores right now."""
    matmul_flags = torch.backends.cuda.matmul
    precision = getattr(matmul_flags, "fp32_precision", None)  # torch >= 2.9
    if precision in ("tf32", "ieee"):
        return precision == "tf32"
    try:
        return bool(matmul_flags.allow_tf32)
    except RuntimeError:  # torch refuses to read the legacy flag once both APIs were used
        return torch.get_float32_matmul_precision() != "highest"


def resolve_precision(dtype: torch.dtype, input_precision) -> str:
    """'native' for 16-bit inputs; for float32, 'tf32' or 'ieee', as asked or as torch.mm would."""
    if dtype != torch.float32:
        return "native"
    if input_precision is not None:
        return input_precision
    return "tf32" if torch_uses_tf32() else "ieee"


class DeviceFacts(NamedTuple):
    name: str
    num_sms: int
    smem_bytes: int
    tma: bool


@functools.lru_cache(maxsize=None)
def device_facts(device: torch.device) -> DeviceFacts:
    if device.type == "cpu":  # the interpreter: H100-like limits, few "SMs" to keep it quick
        return DeviceFacts("cpu-interpreter", 4, 232448, True)
    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    smem = triton.runtime.driver.active.utils.get_device_properties(index)["max_shared_mem"]
    return DeviceFacts(props.name, props.multi_processor_count, smem, props.major >= 9)


# The TMA path encodes three tensor maps on the host every call: 87-125 us a call at 64^3 on
# the H100 machine, against 48-56 us on the pointer path. Below this many multiply-adds the
# pointer kernel is as fast on the GPU, so host time decides: 16x4096x4096 and 128x4096x4096
# ran at 0.50-0.56x torch.mm on the TMA path and 0.81-0.91x on the pointer path, and the TMA
# path first wins at 1024x4096x14336 (bench/NOTES.md, run 12).
TMA_MIN_MACS = 2 ** 35


def _tma_source(t: torch.Tensor):
    """(tensor whose last dim is contiguous, whether it is t transposed), or None when TMA
    cannot read t: it needs a 16-byte aligned base and 16-byte aligned row strides."""
    size = t.element_size()
    if t.data_ptr() % 16:
        return None
    if t.stride(1) == 1 and t.stride(0) * size % 16 == 0:
        return t, False
    if t.stride(0) == 1 and t.stride(1) * size % 16 == 0:
        return t.T, True
    return None


def _layout(t: torch.Tensor) -> str:
    """N: rows contiguous; T: a transposed view; S: strided both ways."""
    return "N" if t.stride(1) == 1 else "T" if t.stride(0) == 1 else "S"


def transpose(x: torch.Tensor) -> torch.Tensor:
    """x.T as a new contiguous tensor, through transpose_kernel: 2.7-2.9 TB/s on an H100
    against 0.95 TB/s for torch's x.T.contiguous() (bench/NOTES.md)."""
    R, C = x.shape
    y = torch.empty((C, R), dtype=x.dtype, device=x.device)
    if y.numel():
        grid = (triton.cdiv(R, 64), triton.cdiv(C, 64))
        transpose_kernel[grid](x, y, R, C, x.stride(0), x.stride(1), BLOCK=64)
    return y


def _k_major(a: torch.Tensor, b: torch.Tensor):
    """TF32 operands with K contiguous. wgmma reads 32-bit operands from shared memory only
    K-major; Triton otherwise stages a row-major B through registers every K step. Measured
    on an H100 at 4096^3 (bench/NOTES.md): 99 TFLOP/s as it is, 364 for the kernel on a
    K-major copy, which costs one read and one write of the operand (0.05 ms)."""
    if a.stride(1) != 1:
        a = transpose(a.T)
    if b.stride(0) != 1:
        b = transpose(b).T
    return a, b


def fit_descriptors(nargs: dict) -> None:
    """Sets each TMA descriptor's block to the config's tile (a config pre_hook, so the
    autotuner's trial launches use it too)."""
    BM, BN, BK = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [BK, BM] if nargs["A_TRANS"] else [BM, BK]
    nargs["b_desc"].block_shape = [BN, BK] if nargs["B_TRANS"] else [BK, BN]
    nargs["c_desc"].block_shape = [BM, BN // 2]  # the kernel stores C in two halves


class Launch:
    """One product C = A @ B: its kernel path, arguments and grid, ready to run under any config."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, precision: str):
        self.M, self.K = a.shape
        self.N = b.shape[1]
        self.dtype, self.precision = a.dtype, precision
        self.facts = device_facts(a.device)
        self.constants = dict(
            INPUT_PRECISION="ieee" if precision == "ieee" else "tf32",
            UPCAST=a.dtype == torch.bfloat16 and validation.interpreting(),
        )
        self.layout = _layout(a) + _layout(b)
        if self.facts.tma and precision == "tf32":
            a, b = _k_major(a, b)
        use_tma = self.facts.tma and self.M * self.N * self.K >= TMA_MIN_MACS
        sources = [_tma_source(t) for t in (a, b, c)] if use_tma else [None]
        if all(s is not None for s in sources) and not sources[2][1]:
            (a_src, a_t), (b_src, b_t), (c_src, _) = sources
            self.path, self.kernel = "tma", matmul_tma_kernel
            # Placeholder blocks; fit_descriptors sets each config's tile before launch.
            descs = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (a_src, b_src, c_src)]
            self.args = (*descs, self.M, self.N, self.K)
            self.constants.update(A_TRANS=a_t, B_TRANS=b_t, NUM_SMS=self.facts.num_sms)
        else:
            self.path, self.kernel = "pointer", matmul_kernel
            self.args = (a, b, c, self.M, self.N, self.K, *a.stride(), *b.stride(), *c.stride())

    def grid(self, meta):
        tiles = triton.cdiv(self.M, meta["BLOCK_M"]) * triton.cdiv(self.N, meta["BLOCK_N"])
        return (min(tiles, self.facts.num_sms),) if self.path == "tma" else (tiles,)

    def named_args(self, cfg: triton.Config) -> dict:
        names = self.kernel.arg_names[:len(self.args)]
        return {**dict(zip(names, self.args)), **self.constants, **cfg.kwargs}

    def run(self, cfg: triton.Config) -> None:
        if self.path == "tma":
            fit_descriptors(self.named_args(cfg))
        self.kernel[self.grid(cfg.kwargs)](*self.args, **self.constants, **cfg.all_kwargs())

    @property
    def elem_bytes(self) -> int:
        return self.dtype.itemsize

    def prune(self, cfgs):
        return config_space.prune(cfgs, self.M, self.N, self.K, self.elem_bytes,
                                  self.facts.smem_bytes, self.path == "tma")

    def heuristic(self) -> triton.Config:
        return config_space.heuristic(self.M, self.N, self.K, self.dtype, self.precision,
                                      self.facts.num_sms, self.elem_bytes, self.facts.smem_bytes,
                                      self.path == "tma")

    @property
    def tuning_key(self) -> tuple:
        """What the best config depends on; shapes as buckets, so nearby shapes share a config."""
        return (self.facts.name, self.dtype, self.precision, self.path, self.layout,
                config_space.bucket(self.M), config_space.bucket(self.N), config_space.bucket(self.K))

    def cache_key(self) -> str:
        """tuning_key as the disk cache spells it."""
        from .cache import make_key
        return make_key(self.facts.name, self.dtype, self.precision, self.path, self.layout,
                        self.M, self.N, self.K)


def matmul(a: torch.Tensor, b: torch.Tensor, *, out=None, config=None, input_precision=None) -> torch.Tensor:
    """C = a @ b for 2-D float16, bfloat16 or float32 tensors, like torch.mm(a, b, out=out).

    Accumulates in fp32 and returns the inputs' dtype. float32 runs on TF32 tensor cores
    exactly when torch.mm would (torch.backends.cuda.matmul.fp32_precision, or the older
    allow_tf32 / set_float32_matmul_precision); ``input_precision="ieee"`` or ``"tf32"``
    overrides. ``config`` pins a tile config (a dict such as ``{"BLOCK_M": 128, "BLOCK_N":
    128, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3}`` or a triton.Config) and skips
    tuning; otherwise the config comes from the tuning cache, tuning, or a heuristic.
    """
    validation.check_matmul_args(a, b, out)
    precision = resolve_precision(a.dtype, validation.check_precision(input_precision))
    pinned = validation.check_config(config) if config is not None else None
    M, K = a.shape
    N = b.shape[1]
    if out is None:
        out = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    launch = Launch(a, b, out, precision)
    launch.run(pinned or tuning.choose_config(launch))
    return out
