"""What the benchmark's tables share: operand copies past the L2, interleaved timing, relative
error against float64, and the config tritonmm's planner chose. One place each, so that the
product table (bench/__main__.py), the sweep (bench/sweep.py), the op suites (bench/suites.py),
the fp8 measurement (bench/fp8.py) and the tests measure alike.
"""
import torch

from tritonmm import native, timing, validation
from tritonmm.config_space import is_gemv
from tritonmm.planner import chosen

# Above this many multiply-adds the float64 reference is skipped (error shown as '-'): on a GPU
# with slow float64 it would take longer than the timing.
REF_MAX_MACS = 2 ** 36


def copies(nbytes: int) -> int:
    """How many input copies of nbytes to rotate through so that one pass exceeds twice the L2
    (up to 8), as a model's layers each bring their own weights."""
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    return min(8, max(1, -(-2 * l2 // max(nbytes, 1))))


def rel_err(out, ref, scale=None) -> float:
    """The relative Frobenius error ||out - ref|| / ||ref|| of out against its float64 reference ref; with
    scale (a tensor of ref's shape, such as |a| @ |b|), over the larger of ||ref|| and ||scale||, for results
    that may cancel to near zero. The one implementation: the bench's tables, tests/conftest.py and
    tests/sanitize_triton.py all call it.

    Anything not finite in out (NaN: an element never written; inf: an overflow) gives inf, never a small
    number; so does a non-finite ref. inf rather than NaN: both fail any `err < bound`, but inf also sorts as
    the worst error and reads as one in a table. A zero reference divides by 1e-300 instead of 0, so an exact
    zero result is 0 and any other is huge."""
    ref = ref.double()
    diff = (out.double() - ref).norm()
    if not torch.isfinite(diff):
        return float("inf")
    denominator = ref.norm() if scale is None else torch.maximum(ref.norm(), scale.double().norm())
    return (diff / denominator.clamp_min(1e-300)).item()


def tuning_on() -> bool:
    """Whether tritonmm tunes a shape the tuning cache does not hold, as TRITONMM_AUTOTUNE says: python -m bench
    sets it for its runs (1, or 0 for --quick) unless the environment already does."""
    return validation.autotune_enabled(default=True)


def native_state() -> str:
    """Whether use_tritonmm()'s aten::mm, addmm and bmm and tritonmm's linear, mm and matmul repeat products from C++
    in this process (tritonmm.native: TRITONMM_NATIVE and a build on disk), for the tables' headers."""
    if native.module() is not None:
        return ("on (native.cpp repeats aten::mm, addmm and bmm, and tritonmm's linear, mm and matmul, calls seen "
                "before; python -m tritonmm.native)")
    return "off (Python's relaunch alone; TRITONMM_NATIVE=0, or no build of native.cpp: python -m tritonmm.native)"


def tuning_state() -> str:
    """How tritonmm picks configs in this process (tuning_on), for the tables' headers."""
    if tuning_on():
        return "tuned (TRITONMM_AUTOTUNE=1: each shape the tuning cache lacks is tuned at its first eager call)"
    return "untuned (TRITONMM_AUTOTUNE=0: the planner's default config where the tuning cache holds none)"


def parse_range(text: str, flag: str, example: str) -> tuple:
    """(lo, hi) of a command line's "LO-HI", two whole numbers with 1 <= LO <= HI; ValueError naming flag."""
    try:
        lo, hi = map(int, text.split("-"))
    except ValueError:
        lo = hi = 0
    if not 1 <= lo <= hi:
        raise ValueError(f"{flag} takes LO-HI, two whole numbers with 1 <= LO <= HI (e.g. {example}), not {text!r}")
    return lo, hi


def replay_errors(graphs: dict, outs: dict, sets: list) -> dict:
    """{name: rel_err} of each outs[name] after one replay of every graph, each of which computes
    its out for every operand set in turn: checked against the last set's float64 product."""
    for g in graphs.values():
        g.replay()
    torch.cuda.synchronize()
    ref = sets[-1][0].double() @ sets[-1][1].double()
    return {name: rel_err(out, ref) for name, out in outs.items()}


def device_ms(fn) -> float:
    """The bench's device time of fn() in ms: do_bench's loop (timing.median_ms) with the L2 emptied by reading a
    256 MB buffer before each run instead of do_bench's memset of it. The memset leaves the L2 full of dirty lines,
    which the run's first misses write back to HBM while it reads (design.md: read-flush; H100,
    bf16, CUDA-graph replays over operand copies rotated past the L2): memset-flushed times were 1.14-1.22x the
    read-flushed ones on decode products (16x14336x4096 x @ W.T: 55.2 against 45.8 us for cuBLAS) and 1.10-1.14x at
    4096^3, while read-flushed times stayed within 1-4% of back-to-back replays with no flush at all."""
    return timing.median_ms(fn, flush="read")


def interleaved_times(fns: dict, rounds: int) -> dict:
    """{name: device_ms in each round}, every fn timed once per round, in turn."""
    for fn in fns.values():
        fn()  # compile, tune and warm up outside the timing
    torch.cuda.synchronize()
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name].append(device_ms(fn))
    return times


def kernel_times(fn) -> list:
    """[(kernel name, device us)] for each kernel fn() launches, in order (torch.profiler, after a call to warm
    up; the profiler's clocks, not do_bench's)."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [(e.name, e.device_time) for e in prof.events() if e.device_time > 0]


def kernels_run(fn) -> str:
    """The kernels fn() launches and their device times (kernel_times): what a library such as cuBLAS chose
    for a product, for the experiments' notes."""
    return "; ".join(f"{name[:70]} {us:.1f}us" for name, us in kernel_times(fn))


def served(a, captured: bool, scales=(None, None)) -> bool:
    """Whether the bench's call of a @ b through tritonmm.mm, matmul or linear (into a contiguous out, no precision,
    config or activation) is one native.cpp repeats, for planner.chosen to name the plan it runs (design.md:
    native-staging): eager, a 16-bit product of matrices (or a batch, as bmm's) without FP8 scales, with a native build
    loaded."""
    return not captured and a.dim() in (2, 3) and scales[0] is None and native.serves(a.dtype)


def tritonmm_config(a, b, scale_a=None, scale_b=None, *, out_dtype=None, captured: bool = False) -> tuple:
    """(text, (BLOCK_M, BLOCK_N)): the kernel path and config tritonmm's planner chose for a @ b called
    eagerly or (captured) in a CUDA graph, after an eager call has tuned it. An FP8 product's scales and
    out_dtype must be the call's: they are part of the tuning key, and other ones would look up (on a
    GPU, tune) another product."""
    scales = (scale_a, scale_b)
    cfg, path = chosen(a, b, "native", scales=scales, out_dtype=out_dtype, captured=captured,
                       served=served(a, captured, scales))
    kw = cfg.kwargs
    path = ("one-row" if kw["BLOCK_M"] == 1 else "rows") if is_gemv(cfg) else path  # kernels/gemv.py
    return f"{path} {config_text(cfg)}", (kw["BLOCK_M"], kw["BLOCK_N"])


def config_text(cfg) -> str:
    """A config as the tables print it: tile, warps, stages, then split-K, wave-tail and programs an SM where it has
    them."""
    kw = cfg.kwargs
    return (f"{kw['BLOCK_M']}x{kw['BLOCK_N']}x{kw['BLOCK_K']} w{cfg.num_warps} s{cfg.num_stages}"
            + (f" split-K {kw['SPLIT_K']}" if kw.get("SPLIT_K", 1) > 1 else "") + (" +tail" if kw.get("TAIL") else "")
            + (f" {kw['PER_SM']}/SM" if kw.get("PER_SM", 1) > 1 else ""))


def round_order(names: list, i: int) -> list:
    """The order of round i: names rotated by i, so that over as many rounds as names each way is timed once in
    each place (its place in a round moved the Gluon tf32x3 kernel by 6-7% at 8192^3: design.md: gluon-tf32x3)."""
    k = i % len(names)
    return names[k:] + names[:k]
