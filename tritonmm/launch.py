"""Launching one kernel step: directly on real tensors, through wrap_triton under torch.compile's
tracing, not at all on fake tensors in the CPU interpreter; with the launch options the step asks for."""
import torch

from . import config_space, fast_launch, thresholds, validation
from .kernels.gemm_tma import fit_descriptors, gemm_tma_kernel


def capturing(t: torch.Tensor) -> bool:
    """Whether t's device stream is being captured into a CUDA graph now."""
    return t.device.type == "cuda" and torch.cuda.is_current_stream_capturing()


def pdl(facts, traced: bool) -> bool:
    """Whether a product's launches use programmatic dependent launch: on Hopper (facts.tma), on real
    tensors (traced launches take no such option), compiled (not in the interpreter). design.md: pdl."""
    return facts.tma and not traced and not validation.interpreting() and thresholds.for_device(facts).pdl


def options(use_pdl: bool, num_warps: int, num_stages: int | None = None) -> dict:
    """A launch's options: its warps and stages, and launch_pdl where the kernel waits for its predecessor."""
    opts = dict(num_warps=num_warps) if num_stages is None else dict(num_warps=num_warps, num_stages=num_stages)
    if use_pdl:
        opts["launch_pdl"] = True
    return opts


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


def launch_step(step, traced: bool = False):
    """Launches one of Product.steps' (kernel, grid, args, constants, launch options), a TMA kernel's descriptors
    fitted to its tile first; returns Triton's compiled kernel (None in the interpreter or under tracing)."""
    kernel, grid, args, constants, opts = step
    if kernel is gemm_tma_kernel:
        fit_descriptors(dict(zip(kernel.arg_names, args), **constants))
    return launcher(kernel, traced)[grid](*args, **constants, **opts)


def gluon(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, schedule: str) -> tuple:
    """out = a @ b on the Gluon kernel (kernels/gluon_gemm.py) under one of its schedules, for products rules.gluon
    or rules.gluon_as_given gives it: (out, [fast_launch.Compiled] that relaunches it, or None where nothing was
    launched). A launch through Triton costs about 100 us of host time, a relaunch about 18 (design.md:
    gluon-relaunch). Schedule "tf32x3": a and b are the split operands of kernels/gluon_tf32x3.py."""
    from .kernels import gluon_gemm, gluon_tf32x3
    if schedule == gluon_tf32x3.NAME:
        out, launched = gluon_tf32x3.run(a, b, out)
    else:
        out, launched = gluon_gemm.run(a, b, out, schedule)
    if launched is None:
        return out, None
    compiled, grid, descriptors, rest = launched
    return out, [fast_launch.Compiled(compiled, grid, rest, descriptors, tensors=len(descriptors))]


def gluon_config(schedule: str):
    """A Gluon schedule as a config, for tables: the tile one CTA computes, its ring's stages, its consumer warps."""
    from .kernels import gluon_gemm, gluon_tf32x3
    if schedule == gluon_tf32x3.NAME:
        s, block_k, stages = gluon_tf32x3.SCHEDULE, gluon_tf32x3.BLOCK_K, gluon_tf32x3.stages()
    else:
        s, block_k, stages = gluon_gemm.SCHEDULES[schedule], gluon_gemm.BLOCK_K, gluon_gemm.stages(schedule)
    return config_space.make_config(s.tile_m // s.ctas, s.tile_n, block_k, stages, s.consumers * s.warps())
