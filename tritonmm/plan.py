"""One product -> kernel path, config, grid and arguments, launched on its operands' device.

``product(a, b, ...)`` is the one entry point below the public API: act(a @ b + bias) for 2-D
operands, or for 3-D ones a batch of products in one launch. It decides the precision's
constants, picks the kernel path (TMA descriptors for large products whose operands allow
it, pointers otherwise), asks tuning.py for a config unless one is pinned, and launches
on the operands' device. Checks live in validation.py, tile spaces in config_space.py.

Under torch.compile the same code is traced with fake tensors (library.py registers it
through ``torch.library.triton_op``): nothing is benchmarked, pointer-kernel launches go
through ``wrap_triton``, and a product that would take the TMA kernel is left to run when the
graph runs, through the opaque operator tritonmm::eager_product (host-side descriptors do not
trace in torch 2.11-2.14). Callers check arguments first (validation.py, override.py).
"""
import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from . import config_space, device, fast_launch, tuning, validation
from .kernels.gemm import gemm_kernel
from .kernels.gemm_tma import fit_descriptors, gemm_tma_kernel
from .kernels.transpose import transpose_kernel


@torch.compiler.assume_constant_result  # torch.compile reads the flag when it traces, as for torch.mm
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


# Products of at least this many multiply-adds take the TMA kernel when their operands allow.
# Session 2 set 2**35 from host time, when the TMA path rebuilt descriptors and bound every
# argument each call (87-125 us at 64^3). With both paths relaunched directly (fast_launch.py),
# session 3 forced each path, tuned, on 36 bf16 shapes (notes/experiments/tma_threshold.py,
# H100): from about 2**31 (2048x1024x1024, 128x4096x4096) the TMA kernel ran 1.4-7x the pointer
# kernel for x @ W.T and for K not a multiple of 64 (3000x3008x3000: 339 vs 54 TFLOP/s), and
# 0.98-1.16x for the other aligned row-major cases, with outliers re-checked by the sweep.
TMA_MIN_MACS = 2 ** 31


def _tma_source(t: torch.Tensor):
    """(matrix whose last dim is contiguous, whether it is t transposed), or None when TMA
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
    """N: rows contiguous; T: a transposed view; S: strided both ways (of the last two dims)."""
    return "N" if t.stride(-1) == 1 else "T" if t.stride(-2) == 1 else "S"


def bias_kind(bias, M, N) -> str:
    """How a bias broadcasts over (M, N): kernels.tiles.BIAS_KINDS."""
    if bias is None:
        return "none"
    stride_m, stride_n = bias.expand(M, N).stride()
    return "row" if stride_m == 0 else "column" if stride_n == 0 else "matrix"


def _hint(n) -> int:
    """A size as an int: itself, or under dynamic-shape tracing the example value behind it.
    Choices made from hints (a config) are valid for every size; they only tune speed."""
    return n if isinstance(n, int) else int(n.node.hint if n.node.hint is not None else 4096)


class _NoLaunch:
    """A kernel that is not launched: on fake tensors in the CPU interpreter, where no tracer
    can see a kernel and a fake implementation needs only the output's shape."""

    def __getitem__(self, grid):
        return lambda *args, **kwargs: None


def launcher(kernel, traced: bool):
    """How to launch ``kernel``: directly on real tensors; through wrap_triton on fake ones, so
    torch.compile records it (triton_op's tracing sees only wrapped kernels)."""
    if not traced:
        return kernel
    return _NoLaunch() if validation.interpreting() else torch.library.wrap_triton(kernel)


def transpose(x: torch.Tensor, traced: bool = False) -> torch.Tensor:
    """x.T as a new contiguous tensor, through transpose_kernel: 2.7-2.9 TB/s on an H100
    against 0.95 TB/s for torch's x.T.contiguous() (notes/NOTES.md)."""
    R, C = x.shape
    y = torch.empty((C, R), dtype=x.dtype, device=x.device)
    if y.numel():
        grid = (triton.cdiv(R, 64), triton.cdiv(C, 64))
        with device.on_device(x.device):
            launcher(transpose_kernel, traced)[grid](x, y, R, C, x.stride(0), x.stride(1), BLOCK=64)
    return y


def _k_major(a: torch.Tensor, b: torch.Tensor, traced: bool):
    """TF32 operands with K contiguous. wgmma reads 32-bit operands from shared memory only
    K-major; Triton otherwise stages a row-major B through registers every K step. Measured
    on an H100 at 4096^3 (notes/NOTES.md): 99 TFLOP/s as it is, 364 for the kernel on a
    K-major copy, which costs one read and one write of the operand (0.05 ms)."""
    if a.stride(1) != 1:
        a = transpose(a.T, traced)
    if b.stride(0) != 1:
        b = transpose(b, traced).T
    return a, b


class Product:
    """One launch: act(A @ B + bias) into C, for 2-D operands or a batch of 3-D ones.
    Holds its kernel path, arguments and grid, ready to run under any config."""

    def __init__(self, a, b, c, precision: str, bias=None, activation: str = "none"):
        self.traced = validation.traced(a)
        self.batched = a.dim() == 3
        self.Z = a.shape[0] if self.batched else 1
        self.M, self.K = a.shape[-2:]
        self.N = b.shape[-1]
        self.dtype, self.precision, self.device = a.dtype, precision, a.device
        self.facts = device.facts(a.device)
        self.layout = _layout(a) + _layout(b) + ("b" if self.batched else "")
        self.constants = dict(
            BIAS=bias_kind(bias, self.M, self.N), ACTIVATION=activation,
            INPUT_PRECISION="ieee" if precision == "ieee" else "tf32",
            UPCAST=a.dtype == torch.bfloat16 and validation.interpreting(),
        )
        # The bias as a broadcast (M, N) view: a linear layer's (N,) bias has strides (0, 1).
        bias_args = (bias, *bias.expand(self.M, self.N).stride()) if bias is not None else (None, 0, 0)
        if self.facts.tma and precision == "tf32" and not self.batched:
            staged_a, staged_b = _k_major(a, b, self.traced)
            self.staged = staged_a is not a or staged_b is not b  # a copy, made per call
            a, b = staged_a, staged_b
        else:
            self.staged = False
        sources = [_tma_source(t) for t in (a, b, c)] if self._tma_ok() else [None]
        if all(s is not None for s in sources) and not sources[2][1]:
            (a_src, a_t), (b_src, b_t), (c_src, _) = sources
            self.path, self.kernel = "tma", gemm_tma_kernel
            # Placeholder blocks; fit_descriptors sets each config's tile before launch.
            descs = [TensorDescriptor.from_tensor(t, [16, 16]) for t in (a_src, b_src, c_src)]
            self.args = (*descs, bias_args[0], self.M, self.N, self.K, *bias_args[1:])
            self.constants.update(A_TRANS=a_t, B_TRANS=b_t, NUM_SMS=self.facts.num_sms)
        else:
            self.path, self.kernel = "pointer", gemm_kernel
            a3, b3, c3 = (t if self.batched else t.unsqueeze(0) for t in (a, b, c))
            self.args = (a3, b3, c3, bias_args[0], self.M, self.N, self.K,
                         *a3.stride(), *b3.stride(), *c3.stride(), *bias_args[1:])

    def _tma_ok(self) -> bool:
        """TMA serves large unbatched products of real tensors on Hopper."""
        return (self.facts.tma and not self.batched and not self.traced
                and self.M * self.N * self.K >= TMA_MIN_MACS)

    def grid(self, meta):
        tiles = triton.cdiv(self.M, meta["BLOCK_M"]) * triton.cdiv(self.N, meta["BLOCK_N"])
        return (min(tiles, self.facts.num_sms),) if self.path == "tma" else (self.Z * tiles,)

    def named_args(self, cfg: triton.Config) -> dict:
        names = self.kernel.arg_names[:len(self.args)]
        return {**dict(zip(names, self.args)), **self.constants, **cfg.kwargs}

    def run(self, cfg: triton.Config):
        """Launches under ``cfg``; returns Triton's compiled kernel (None in the interpreter)."""
        if self.path == "tma":
            fit_descriptors(self.named_args(cfg))
        return launcher(self.kernel, self.traced)[self.grid(cfg.kwargs)](
            *self.args, **self.constants, **cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)

    def compiled(self, kernel, cfg: triton.Config):
        """What fast_launch needs to relaunch ``kernel`` for this product's key, or None where a
        call must re-plan: operands staged by a copy (TF32), and tracing or graph capture."""
        if kernel is None or self.staged or not self.can_benchmark:
            return None
        named = self.named_args(cfg)
        return fast_launch.Compiled(kernel, self.grid(cfg.kwargs), tuple(named[n] for n in self.kernel.arg_names[4:]),
                                    self.args[:3] if self.path == "tma" else None)

    @property
    def can_benchmark(self) -> bool:
        """Tuning times kernels: never on fake tensors or inside CUDA-graph capture."""
        return not self.traced and not (self.device.type == "cuda" and torch.cuda.is_current_stream_capturing())

    def prune(self, cfgs):
        return config_space.prune(cfgs, _hint(self.M), _hint(self.N), _hint(self.K), self.dtype.itemsize,
                                  self.facts.smem_bytes, self.path == "tma", self.constants["BIAS"] == "matrix")

    def heuristic(self) -> triton.Config:
        return config_space.heuristic(_hint(self.M), _hint(self.N), _hint(self.K), self.dtype, self.precision,
                                      max(1, self.facts.num_sms // _hint(self.Z)),
                                      self.dtype.itemsize, self.facts.smem_bytes, self.path == "tma",
                                      self.constants["BIAS"] == "matrix")

    @property
    def tuning_key(self) -> tuple:
        """What the best config depends on; shapes as buckets, so nearby shapes share a config."""
        return (self.facts.name, self.dtype, self.precision, self.path, self.layout, self.epilogue,
                *(config_space.bucket(_hint(n)) for n in (self.M, self.N, self.K)))

    def cache_key(self) -> str:
        """tuning_key as the disk cache spells it."""
        from .cache import make_key
        return make_key(self.facts.name, self.dtype, self.precision, self.path, self.layout + self.epilogue,
                        _hint(self.M), _hint(self.N), _hint(self.K))

    @property
    def epilogue(self) -> str:
        """'' for a plain product, else '+bias kind+activation': the epilogue's registers and shared
        memory move the best config, and can make one that fits without it too large."""
        bias, act = self.constants["BIAS"], self.constants["ACTIVATION"]
        return "" if bias == act == "none" else f"+{bias}+{act}"


def product(a, b, *, precision: str, bias=None, activation: str = "none", out=None, config=None):
    """act(a @ b + bias) into out (allocated when None) and returned. a is (M, K) and b (K, N),
    or both 3-D, (Z, M, K) and (Z, K, N), for Z products in one launch (a batch stride of 0
    broadcasts an operand). Arguments are assumed checked (validation.py)."""
    if out is None and validation.traced(a) and _tma_when_run(a, b):
        # torch.compile is tracing a product that runs on the TMA kernel. Its host-side tensor
        # descriptors do not trace through triton_op in torch 2.11-2.14 (the compiled graph lost
        # the launch), and the pointer kernel runs such products at 0.4x (notes/NOTES.md, run 15):
        # the graph calls the planner itself when it runs, through an operator it cannot see into.
        return torch.ops.tritonmm.eager_product(a, b, bias, activation, precision,
                                                None if config is None else config_space.as_list(config))
    if out is None:
        out = torch.empty((*a.shape[:-1], b.shape[-1]), dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        return out
    if a.shape[-1] == 0:  # an empty sum: the epilogue alone
        return out.copy_(epilogue_reference(torch.zeros_like(out, dtype=torch.float32), bias, activation))
    key = None
    if config is None and fast_launch.enabled() and not validation.traced(a):
        key = _launch_key(a, b, out, bias, precision, activation)
        known = _compiled.get(key)
        if known is not None:
            with device.on_device(a.device):
                if known((a, b, out, bias), fast_launch.current_stream(a.device.index)):
                    return out
    with device.on_device(a.device):
        launch = Product(a, b, out, precision, bias, activation)
        cfg = config or tuning.choose_config(launch)
        kernel = launch.run(cfg)
        ready = launch.compiled(kernel, cfg) if key is not None else None
    if ready is not None:
        if len(_compiled) >= 4096:  # many distinct shapes: start over rather than grow without bound
            _compiled.clear()
        _compiled[key] = ready
    return out


def _tma_when_run(a, b) -> bool:
    """Whether product(a, b) on real tensors like these would take the TMA path: Hopper, large
    enough, rows 16-byte aligned (read from strides and storage offsets, which fake tensors
    have; sizes as their example values under dynamic shapes; the choice only moves speed)."""
    def aligned(t):
        size = t.element_size()
        row = t.stride(0) if t.stride(1) == 1 else t.stride(1) if t.stride(0) == 1 else 1
        return _hint(row) * size % 16 == 0 and _hint(t.storage_offset()) * size % 16 == 0
    return (a.dim() == 2 and device.facts(a.device).tma and aligned(a) and aligned(b)
            and _hint(a.shape[0]) * _hint(a.shape[1]) * _hint(b.shape[1]) >= TMA_MIN_MACS)


# fast_launch.Compiled by _launch_key: products seen before relaunch their compiled kernel.
_compiled: dict = {}


def _launch_key(a, b, out, bias, precision, activation) -> tuple:
    """Every fact the path, the config and Triton's specialization of a product depend on:
    equal keys launch the same compiled kernel with the same grid and integer arguments."""
    return (a.device, a.dtype, precision, activation, a.shape, b.shape, a.stride(), b.stride(), out.stride(),
            a.data_ptr() & 15, b.data_ptr() & 15, out.data_ptr() & 15,
            None if bias is None else (bias.dtype, bias.shape, bias.stride(), bias.data_ptr() & 15),
            TMA_MIN_MACS, tuning.generation)


def epilogue_reference(z: torch.Tensor, bias, activation: str) -> torch.Tensor:
    """The fused epilogue in torch ops (for K = 0, and the activation of autograd's forward)."""
    if bias is not None:
        z = z + bias
    if activation == "relu":
        return torch.relu(z)
    if activation in ("gelu", "gelu_tanh"):
        return torch.nn.functional.gelu(z, approximate="tanh" if activation == "gelu_tanh" else "none")
    if activation == "silu":
        return torch.nn.functional.silu(z)
    return z


def chosen(a, b, precision: str, bias=None, activation: str = "none"):
    """(config, kernel path) that product(a, b, ...) runs with now: for tables and experiments."""
    out = torch.empty((*a.shape[:-1], b.shape[-1]), dtype=a.dtype, device=a.device)
    with device.on_device(a.device):
        launch = Product(a, b, out, precision, bias, activation)
        return tuning.choose_config(launch), launch.path
