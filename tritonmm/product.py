"""One product's plan: its kernel path, staged operands, arguments and launches under any config, and
what the tuner keys and chooses among (Product). rules.py decides the path and the copies; staging.py
makes the copies; launch.py launches each step; tuning.py picks the config; planner.py is the entry.
"""
import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

from . import cache, config_space, cost_model, default_config, device, launch, layout, native, rules, splits, staging, thresholds, validation
from .config_space import cdiv
from .kernels.gemm import gemm_kernel
from .kernels.gemm_tma import gemm_tma_kernel
from .kernels.gemv import gemv_kernel
from .kernels.split_k import split_k_reduce_kernel
from .layout import hint
from .precision import FP8_DTYPES


class Product:
    """One product: act(A @ B + bias) into C, for 2-D operands or a batch of 3-D ones. Holds its kernel path,
    arguments and grid, ready to run under any config: the TMA kernel (operands staged into aligned buffers where
    needed), or the pointer kernel, split over K where the config says so."""
    copies_differ = False  # on the TMA path: whether realign copies otherwise in or out of a CUDA graph

    def __init__(self, a, b, c, precision: str, bias=None, activation: str = "none", scales=(None, None),
                 captured=None, served: bool = False, transposed: bool = False):
        self.traced = validation.traced(a)
        # The caller's operands: what the row kernel reads. The others read self.a, self.b (staged
        # copies where the path needs them); every kernel writes self.out.
        self.given = (a, b)
        # Launched into a CUDA graph (None: whether the stream is capturing now); moves the path rule.
        self.captured = (not self.traced and launch.capturing(a)) if captured is None else captured
        self.batched = a.dim() == 3
        self.transposed = transposed  # b.T @ a.T of a few-row product (rules.transposed; design.md: *-transpose)
        self.Z = a.shape[0] if self.batched else 1
        self.M, self.K = a.shape[-2:]
        self.N = b.shape[-1]
        self.dtype, self.precision, self.device = a.dtype, precision, a.device
        self.facts = device.facts(a.device)
        self.th = thresholds.for_device(self.facts)
        # The row kernel's rows a program where it may run this product on the caller's B (kernels/gemv.py), else 0: 1
        # for one row of a B along K (x @ W.T), 2-8 where rules.row_kernel gives it (design.md: ieee-rows). Once a plan.
        self.row_block = int(b.stride(-2) == 1) if hint(self.M) == 1 else \
            rules.row_kernel(self.facts, precision, b, self.M, self.N, self.Z)
        self.layout = layout.layout(a) + layout.layout(b) + ("b" if self.batched else "")
        self.scales = scales  # FP8 products' (scale_a, scale_b), or (None, None)
        self.repeated = [served, native.repeats_tma(served)]  # pointer, TMA kernel: rules.eager_bars, graph_bars
        self.constants = dict(
            BIAS=layout.bias_kind(bias, self.M, self.N), ACTIVATION=activation,
            SCALE_A=layout.scale_kind(scales[0], "row"), SCALE_B=layout.scale_kind(scales[1], "column"),
            # tl.dot's input_precision; 16-bit products ignore it.
            INPUT_PRECISION=precision if precision in ("ieee", "tf32x3") else "tf32",
            UPCAST=a.dtype in (torch.bfloat16, *FP8_DTYPES) and validation.interpreting(),
            PDL=launch.pdl(self.facts, self.traced),
        )
        self.bias, self.out = bias, c
        # The bias as a broadcast (M, N) view: a linear layer's (N,) bias has strides (0, 1).
        self.bias_strides = bias.expand(self.M, self.N).stride() if bias is not None else (0, 0)
        # Copies made before the kernel: a function per operand (None: read as it is). A relaunch of
        # this product repeats them (relaunch.py).
        self.stagers = [None, None]
        # tf32x3 on the TMA kernel splits operands into TF32 parts once, first, where that pays (rules.presplit; PRESPLIT)
        self.presplit = precision == "tf32x3" and self._tma_candidate() and \
            rules.presplit(self.facts, self.M, self.N, self.K, self.captured)
        if self.presplit:
            self.stagers = [staging.split_a, staging.split_b]
            self.constants["INPUT_PRECISION"] = "tf32"  # each of the three products
        elif self.facts.tma and (precision in ("tf32", "tf32x3") or a.dtype in FP8_DTYPES) \
                and not self.batched:
            self.stagers = staging.k_major_stagers(a, b)
        a, b = staging.stage(self.stagers, a, b, self.traced)
        self.a, self.b = a, b
        self.path, self.kernel = "pointer", gemm_kernel
        # Whether this plan is one only a CUDA graph runs: captured, and on the TMA kernel or staged
        # operands where an eager call of the same product would not be (graph_only).
        self.graph_only = False
        if self._tma_candidate():
            self._try_tma()
        if self.path == "pointer":
            if not any(self.stagers):
                self.stagers = self._pointer_stagers(self.captured)
                self.graph_only = self.captured and any(self.stagers) and not any(self._pointer_stagers(False))
                a, b = staging.stage(self.stagers, a, b, self.traced)
                self.a, self.b = a, b
                self.layout = layout.layout(a) + layout.layout(b) + self.layout[2:]  # the staged ones' ("b": a batch)
            self.constants["SPLIT_K"] = 1  # one slice; steps() launches split-K configs in two passes
            self.args = self._pointer_args(a, b, c)
            self.constants.update(layout.alignment(*self.args[:3], hint(self.M), hint(self.N), hint(a.shape[-1]),
                                            self.traced))

    def _pointer_stagers(self, captured: bool) -> list:
        """The pointer kernel's copies of the caller's operands (16-bit ones it reads narrowly: rules.pointer_staging;
        an IEEE float32 B along K, a batch's too: rules.ieee_n_major); [None, None] where none stages, and tracing."""
        if self.traced:
            return [None, None]
        f, (a, b), M, N, K, repeated = self.facts, self.given, self.M, self.N, self.K, self.repeated[0]
        if self.precision == "ieee" or self.batched:  # a batch: IEEE's copy only
            ieee = self.precision == "ieee" and rules.ieee_n_major(f, b, M, N, K, captured, self.Z)
            return [None, staging.n_major_copy if ieee else None]
        copy_a, copy_b = rules.pointer_staging(f, a, b, M, N, K, captured, repeated)
        return [staging.padded_a_copy if copy_a else None, staging.padded_b_copy if copy_b else None]

    def _pointer_args(self, a, b, c) -> tuple:
        """The pointer kernel's arguments (and the row kernel's: the same list), over 3-D views. An
        unbatched product's batch strides are 0: unsqueeze(0) gives a transposed view a stride of its
        row count, and one not divisible by 16 would hide the alignment of every load from Triton."""
        if self.batched:
            a3, b3, c3 = a, b, c
        elif self.traced:  # torch.compile cannot functionalize a write through as_strided, which torch 2.11 assumes
            a3, b3, c3 = a[None], b[None], c[None]  # of every tensor a Triton 3.8 kernel takes (design.md: traced-views)
        else:
            a3, b3, c3 = (t.as_strided((1, *t.shape), (0, *t.stride())) for t in (a, b, c))
        strides = [s for t in (a3, b3, c3) for s in ((0, *t.stride()[1:]) if not self.batched else t.stride())]
        return (a3, b3, c3, self.bias, *self.scales, self.M, self.N, a.shape[-1],  # K, padded where staged
                *strides, *self.bias_strides)

    def _tma_bytes(self) -> tuple:
        """(What the copies that let TMA read the operands would move, C needing none: C_DESC; the narrowest read the
        pointer kernel would make of the caller's operands: layout.narrowest_read)."""
        return layout.tma_copy_bytes(self.a, self.b), layout.narrowest_read(*self.given)

    @property
    def differs_when_captured(self) -> bool:
        """Whether this eager product would run otherwise in a CUDA graph: one on the pointer kernel on the TMA kernel
        or staged operands (_pointer_stagers); one on the TMA kernel with copies only a graph makes (rules.realign)."""
        if self.captured or self.path != "pointer":
            return not self.captured and self.path == "tma" and self.copies_differ
        if not self.traced and (rules.batched_tma(self.facts, *self.given, captured=True) if self.batched else
                                self._tma_candidate() and self._tma_rules(True, *self._tma_bytes())):
            return True  # (never traced: TMA needs the operands' addresses)
        return not any(self.stagers) and any(self._pointer_stagers(captured=True))

    def _tma_rules(self, captured: bool, staged_bytes: int, read_bytes: int) -> bool:
        """Whether the size rule (rules.tma_path) or, in graphs (and where rules.graph_bars says), the stream model's
        (rules.stream_tma) or the few tiles' (rules.few_tiles_tma) gives TMA."""
        f, M, N = self.facts, self.M, self.N
        return rules.tma_path(f, M, N, self.K, staged_bytes, captured, read_bytes, self.repeated[1]) or \
            rules.stream_tma(f, self.dtype, M, N, self.K, staged_bytes, captured, self.transposed, self.repeated[1]) \
            or rules.few_tiles_tma(f, self.dtype, M, N, self.K, staged_bytes, captured)

    def _tma_candidate(self) -> bool:
        """TMA serves products of real tensors on Hopper (the size rule: tma_path), batches of them where it can take
        the batch in one launch (rules.batched_tma); IEEE float32 only where ieee_tma (design.md: ieee-pointer)."""
        fits = rules.tma_precision(self.facts, self.precision)
        if self.batched:
            return fits and not self.traced and rules.batched_tma(self.facts, *self.given, self.captured)
        return fits and self.facts.tma and not self.traced

    def _try_tma(self):
        """The TMA path if tma_path says so, staging what TMA cannot read: an operand into an aligned copy (the
        caller's tensors are only read); a C that TMA cannot write is stored through pointers. Staged buffers live
        for the call: up to A and B again (tf32x3's split operands: twice), rows padded to staging.ROW_PAD_BYTES."""
        a, b, c = self.a, self.b, self.out
        if self.batched:  # rules.batched_tma has read the batch as it is: nothing is copied
            self.graph_only = self.captured and not rules.batched_tma(self.facts, *self.given, False)
            self._use_tma(a, b, c)
            return
        sources = [layout.tma_source(t) for t in (a, b)]
        staged_bytes, read_bytes = self._tma_bytes()
        if not self._tma_rules(self.captured, staged_bytes, read_bytes):
            return
        # Operands already staged K-major sit in aligned buffers: only the caller's own are copied here, those TMA
        # cannot read and those whose rows it reads slowly (rules.realign, which copies more in a CUDA graph).
        macs = self.M * self.N * self.K
        copies, other = (rules.tma_copies(self.facts, sources, self.stagers, macs, captured, self.repeated[1])
                         for captured in (self.captured, not self.captured))
        self.copies_differ = copies != other
        self.graph_only = self.captured and (self.copies_differ or not rules.tma_path(
            self.facts, self.M, self.N, self.K, staged_bytes, False, read_bytes, self.repeated[1]))
        a, b = staging.stage([staging.aligned_copy if copy else None for copy in copies], a, b)
        self.stagers = [staging.aligned_copy if new else old for new, old in zip(copies, self.stagers)]
        self._use_tma(a, b, c)

    def _use_tma(self, a, b, c):
        """The TMA path over operands TMA reads as they are."""
        self.a, self.b = a, b
        (a_src, a_t), (b_src, b_t) = layout.tma_source(a), layout.tma_source(b)
        self.path, self.kernel = "tma", gemm_tma_kernel
        self.constants.update(A_TRANS=a_t, B_TRANS=b_t, BATCH_A=a_src.dim() == 3, BATCH_B=b_src.dim() == 3,
                              BATCH_C=self.batched, NUM_SMS=self.facts.num_sms, PRESPLIT=self.presplit,
                              C_DESC=layout.c_descriptor(c), SPLIT_K=1, SHIFT=self.th.tma_shift)
        self.args = self._tma_args(a, b, c, self.bias, *self.scales)

    def _tma_args(self, a, b, c, bias, scale_a, scale_b) -> tuple:
        """The TMA kernel's arguments for C = A @ B (C's rows: M; a batch's: its entries'). Placeholder descriptor
        blocks; fit_descriptors sets each config's tile before launch."""
        descs = [TensorDescriptor.from_tensor(src, [16] * src.dim()) for src, _ in map(layout.tma_source, (a, b))]
        c_arg = TensorDescriptor.from_tensor(c, [16] * c.dim()) if self.constants["C_DESC"] else c
        strides = c.stride() if self.batched else (0, *c.stride())
        return (*descs, c_arg, bias, scale_a, scale_b, c.shape[-2], self.N, self.K, self.Z, *self.bias_strides,
                *strides)

    @property
    def staged(self) -> bool:
        """Whether operands are copied (their memory cost) under every config but the row kernel's."""
        return any(self.stagers)

    @property
    def can_split(self) -> bool:
        """Split-K runs on the pointer kernel and on the TMA kernel (not on operands split into TF32 parts),
        for unbatched products, outside tracing (a compiled graph keeps one launch per product)."""
        return not self.batched and not self.traced and not self.presplit

    def split(self, cfg: triton.Config) -> int:
        """Slices of K this config runs with here: 1 for a SPLIT_K pinned where it cannot apply,
        and where the workspace would pass 2**31 elements (split_k.py offsets it in int32)."""
        split = config_space.split_k(cfg) if self.can_split and not config_space.is_gemv(cfg) else 1
        return split if split * hint(self.M) * hint(self.N) < 2 ** 31 else 1

    def launches(self, cfg: triton.Config) -> int:
        """Kernel launches of one call under cfg (copies aside): split-K's or a wave-tail split's two (three: its
        tail in slices of K), or one."""
        rows = self.tail_rows(cfg)
        return 1 + (self.split(cfg) > 1 or bool(rows)) + (bool(rows) and self.tail_launch(self.M - rows)[1] > 1)

    def grid(self, meta, split: int = 1, rows=None):
        """The launch grid under meta's tile, over all of C's rows or the first ``rows`` (persistent: NUM_SMS)."""
        tiles = cdiv(self.M if rows is None else rows, meta["BLOCK_M"]) * cdiv(self.N, meta["BLOCK_N"])
        return (min(self.Z * tiles * split, meta["NUM_SMS"]),) if self.path == "tma" else (self.Z * tiles * split,)

    def tail_rows(self, cfg: triton.Config) -> int:
        """Where cfg asks for a wave-tail split (splits.tail_rows) and this product can take
        one (the TMA path, operands not split into TF32 parts): the rows the first launch covers; else 0."""
        if not config_space.tail(cfg) or self.path != "tma" or self.presplit or self.batched:
            return 0
        return splits.tail_rows(self.M, self.N, cfg.kwargs["BLOCK_M"], cfg.kwargs["BLOCK_N"], self.facts.num_sms)

    def tail_launch(self, rows: int) -> tuple:
        """(config, slices of K) of a wave tail's launch over its last ``rows`` rows (splits.tail_launch; 16-bit)."""
        bar = self.th.tail_slices_min_k if self.can_split and self.operand_bytes == 2 else float("inf")
        return splits.tail_launch(rows, self.N, self.K, self.facts.num_sms, bar, self.th.tail_slice_narrow_rows)

    def row_ranges(self, cfg: triton.Config):
        """((0, R), (R, M)): the rows of each launch of a wave-tail split; None without one."""
        return ((0, rows), (rows, self.M)) if (rows := self.tail_rows(cfg)) else None

    def _tma_rows(self, r0: int, r1: int, cfg: triton.Config):
        """The TMA kernel's launch over rows [r0, r1) of the product under cfg, with descriptors of its own."""
        tile = config_space.kernel_params(cfg, self.facts.num_sms)
        return (gemm_tma_kernel, self.grid(tile, rows=r1 - r0),
                self._tma_args(*layout.row_views(r0, r1, self.a, self.b, self.out, self.bias, *self.scales)),
                dict(self.constants, **tile), launch.options(self.constants["PDL"], cfg.num_warps, cfg.num_stages))

    def _epilogue(self) -> dict:
        """The epilogue's constants (scales, bias, activation), for kernels that take no others."""
        return {k: self.constants[k] for k in ("BIAS", "ACTIVATION", "SCALE_A", "SCALE_B")}

    def steps(self, cfg: triton.Config) -> list:
        """The launches of this product under cfg: (kernel, grid, args, constants, launch options), in order."""
        options = launch.options(self.constants["PDL"], cfg.num_warps, cfg.num_stages)
        if config_space.is_gemv(cfg):  # the caller's operands and out, as they are (self.staged: not for it)
            tile = {k: cfg.kwargs[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}
            grid = (self.Z * cdiv(self.M, tile["BLOCK_M"]) * cdiv(self.N, tile["BLOCK_N"]),)
            return [(gemv_kernel, grid, self._pointer_args(*self.given, self.out),
                     dict(self._epilogue(), **tile, PDL=self.constants["PDL"]), options)]
        ranges = self.row_ranges(cfg)
        if ranges:  # the whole waves on cfg's tiles, then the last rows on small tiles over every SM, or in slices of K
            (r0, r1), (r2, r3) = ranges
            tail, split = self.tail_launch(r3 - r2)
            if split == 1:
                return [self._tma_rows(r0, r1, cfg), self._tma_rows(r2, r3, tail)]
            views = layout.row_views(r2, r3, self.a, self.b, self.out, self.bias, *self.scales)
            return [self._tma_rows(r0, r1, cfg),
                    *self._split_k(tail, split, self._tma_args(*views), r3 - r2, *views[2:])]
        split = self.split(cfg)
        if split == 1:
            tile = config_space.kernel_params(cfg, self.facts.num_sms if self.path == "tma" else None)
            return [(self.kernel, self.grid(tile), self.args, dict(self.constants, **tile), options)]
        return self._split_k(cfg, split, self.args, self.M, self.out, self.bias, *self.scales)

    def _split_k(self, cfg, split: int, args, M: int, out, bias, scale_a, scale_b) -> list:
        """Split-K's launches over M rows of C (out; args: the kernel's over them): each slice of K's fp32 sums into
        a (split, M, N) workspace, then their ordered sum with the epilogue. For products of few tiles (splits.py) and
        wave tails (splits.tail_launch): the workspace stays small."""
        tile = config_space.kernel_params(cfg, self.facts.num_sms if self.path == "tma" else None)
        options = launch.options(self.constants["PDL"], cfg.num_warps, cfg.num_stages)
        a3, b3 = args[0], args[1]
        ws = torch.empty((split, M, self.N), dtype=torch.float32, device=self.device)
        plain = {k: "none" for k in self._epilogue()}
        if self.path == "tma":  # the slices' units, then the sum; the workspace is stored through pointers
            first = (gemm_tma_kernel, self.grid(tile, split, rows=M),
                     (a3, b3, ws, None, None, None, M, self.N, self.K, 1, 0, 0, 0, self.N, 1),
                     dict(self.constants, **tile, **plain, SPLIT_K=split, C_DESC=False), options)
        else:
            first = (gemm_kernel, self.grid(tile, split),
                     (a3, b3, ws, None, None, None, M, self.N, a3.shape[-1], *a3.stride(), *b3.stride(),
                      *ws.stride(), 0, 0),
                     dict(self.constants, **tile, **plain, SPLIT_K=split, VEC_C=layout.vec_hint(ws)), options)
        second = (split_k_reduce_kernel, (cdiv(M, 32), cdiv(self.N, 128)),
                  (ws, out, bias, scale_a, scale_b, M, self.N, *out.stride(), *self.bias_strides),
                  dict(SPLIT_K=split, BLOCK_M=32, BLOCK_N=128, PDL=self.constants["PDL"], **self._epilogue()),
                  launch.options(self.constants["PDL"], 4))
        return [first, second]

    def run(self, cfg: triton.Config) -> list:
        """Launches under ``cfg``: [(Triton's compiled kernel, None in the interpreter; its step)], for
        relaunch.compiled."""
        return [(launch.launch_step(step, self.traced), step) for step in self.steps(cfg)]

    @property
    def can_benchmark(self) -> bool:
        """Tuning times kernels: never on fake tensors or inside CUDA-graph capture."""
        return not self.traced and not (self.device.type == "cuda" and torch.cuda.is_current_stream_capturing())

    @property
    def operand_bytes(self) -> int:
        """Bytes of one operand element in shared memory: float32's two TF32 parts when split."""
        return self.dtype.itemsize * (2 if self.presplit else 1)

    def space(self) -> list:
        """The config space of this product's family (config_space.family)."""
        return config_space.configs(self.dtype, self.precision, self.presplit)

    def prune(self, cfgs):
        return config_space.prune(cfgs, hint(self.M), hint(self.N), hint(self.K), self.operand_bytes,
                                  self.facts.smem_bytes, self.path == "tma", self.constants["BIAS"] == "matrix",
                                  self.out.element_size())

    def candidates(self) -> list:
        """The configs tuning times: the family's space (its TMA-only tiles on that kernel only, the tall one
        where N leaves a wide tile's last column mostly empty; its narrow tiles for products of few tiles),
        pruned, with wave-tail (TMA, 16-bit) and split-K variants where they apply, on the TMA kernel its short
        tiles for products of few rows, and the row kernel's configs where it may run the product (row_block)."""
        family = config_space.family(self.dtype, self.precision, self.presplit)
        kept, _ = self.prune([c for c in self.space() if self._tall_offered or not config_space.tuned_tma_only(c)])
        # Pruned apart: a narrow tile must not make prune() drop the space's wider ones as too large.
        kept += self.prune(config_space.narrow(family, hint(self.M), hint(self.N), self.facts.num_sms))[0]
        if self.path == "tma":
            if family == "16bit" and not self.batched:  # split TF32 operands are float32: never this family
                kept = splits.with_tail(kept, self.M, self.N, self.facts.num_sms)
            if self.can_split:
                f, M, N, K = self.facts, self.M, self.N, self.K
                kept = splits.with_tma_split(kept, M, N, K, self.operand_bytes, f.num_sms, lambda c, s: (
                    cost_model.tma_split_pays(c, s, f.arch, M, N, K, f.num_sms, f.hbm_bytes_per_s)))
            # After the split variants: short tiles stream the weight whole (split, they lost; design.md: short-tiles);
            # short K's two programs an SM (design.md: short-k-pairs).
            return kept + self.prune(config_space.short(family, hint(self.M)))[0] + default_config.paired(self)
        if self.can_split:
            kept = splits.with_split_k(kept, hint(self.M), hint(self.N), hint(self.K), self.facts.num_sms)
        if self.row_block:
            kept += self.prune(config_space.gemv_space() if self.row_block == 1 else config_space.rows_space())[0]
        return kept

    def heuristic(self) -> triton.Config:
        """The default config (default_config.for_product): what this product runs with until its shape is tuned."""
        return default_config.for_product(self)

    @property
    def tuning_key(self) -> tuple:
        """What the best config depends on; shapes as buckets, so nearby shapes share a config."""
        return (self.facts.name, self.dtype, self._key_precision, self.path, self._key_layout, self.epilogue,
                *config_space.tuning_shape(hint(self.M), hint(self.N), hint(self.K)))

    def cache_key(self) -> str:
        """tuning_key as the disk cache spells it."""
        return cache.make_key(self.facts.name, self.dtype, self._key_precision, self.path, self._key_layout + self.epilogue,
                        hint(self.M), hint(self.N), hint(self.K))

    @property
    def _key_layout(self) -> str:
        """The operands' layout as keys spell it: a batch's entries (config_space.batch_bucket), the pointer kernel's
        read widths (loads), '+c' where the TMA kernel stores C through pointers (C_DESC), '+t' where the tuner times
        the tall tile, '+rN' where it times the row kernel at N rows a program (row_block; rows of 2-16 share a bucket),
        '~graph' for a plan only CUDA graphs run (graph_only: tuned for replay alone, tuning.rank)."""
        return self.layout + (f"z{config_space.batch_bucket(hint(self.Z))}" if self.batched else "") + self.loads + \
            ("" if self.constants.get("C_DESC", True) else "+c") + ("+t" if self._tall_offered else "") + \
            ("~graph" if self.graph_only else "") + (f"+r{self.row_block}" if self.row_block > 1 else "")

    @property
    def _tall_offered(self) -> bool:
        """Whether candidates() holds the tall tile (config_space.tall_tile_serves: decided by the exact N,
        which the key's N bucket does not tell apart)."""
        return self.path == "tma" and config_space.tall_tile_serves(hint(self.N))

    @property
    def loads(self) -> str:
        """'' where A and B allow the pointer kernel 16-byte reads (and on the TMA path), else
        '@{bytes of A}.{bytes of B}', the widest reads their alignment allows (what the compiler makes of
        the hints differs by Triton version: gemm_kernel's docstring): the best config differs with them."""
        if self.path != "pointer" or self.traced:
            return ""
        wa, wb = (layout.load_bytes(t, self.constants[v]) for t, v in zip(self.args[:2], ("VEC_A", "VEC_B")))
        return "" if wa == wb == 16 else f"@{wa}.{wb}"

    @property
    def _key_precision(self) -> str:
        """The precision as keys spell it: split tf32x3 products have a space of their own."""
        return config_space.family(self.dtype, self.precision, self.presplit) if self.presplit else self.precision

    @property
    def epilogue(self) -> str:
        """'' for a plain product, else '+bias kind+activation' (and FP8's scale kinds and output dtype): the
        epilogue's registers and shared memory move the best config, and can make one that fits without it too large."""
        bias, act = self.constants["BIAS"], self.constants["ACTIVATION"]
        plain = "" if bias == act == "none" else f"+{bias}+{act}"
        if self.dtype not in FP8_DTYPES:
            return plain
        return f"{plain}+scale-{self.constants['SCALE_A']}-{self.constants['SCALE_B']}+{str(self.out.dtype)[6:]}"


