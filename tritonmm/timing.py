"""The one place that times kernels, for the tuner and for bench/.

On a GPU: triton.testing.do_bench (CUDA events, warm-up first, the median of many runs,
L2 flushed between runs), or the same loop with a flush that leaves the L2 clean (``flush="read"``).
In Triton's CPU interpreter the same call shape is timed with the host clock, so tuning logic
can be tested without a GPU. ``calls`` counts every timed benchmark, so a test can prove that a
warm tuning cache benchmarks nothing.
"""
import statistics
import time

import torch
import triton

calls = 0


def median_ms(fn, warmup_ms: float = 25, rep_ms: float = 100, quantiles=None, graph: bool = False,
              flush: str = "memset"):
    """Median run time of fn() in milliseconds (or the given quantiles, as do_bench returns them).
    ``graph``: fn's launches replayed from a CUDA graph (_graph_median_ms), so that the device
    time is measured even where launching from Python takes longer than the kernels run.
    ``flush``: how the L2 is emptied before each run. "memset" is do_bench's own (a 256 MB
    memset); "read" reads a buffer of that size instead (_read_flushed_median_ms), so that the run
    does not start under an L2 full of dirty lines that its own reads must first write back."""
    global calls
    calls += 1
    if flush not in ("memset", "read"):
        raise ValueError(f"flush must be 'memset' or 'read', got {flush!r}")
    if torch.cuda.is_available() and not _interpreting():
        if graph:
            assert quantiles is None, "graph timing returns the median only"
            return _graph_median_ms(fn, rep_ms)
        if flush == "read":
            assert quantiles is None, "read-flushed timing returns the median only"
            return _read_flushed_median_ms(fn, warmup_ms, rep_ms)
        # do_bench returns the mean unless told otherwise; one slow outlier moves a mean.
        return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=quantiles, return_mode="median")
    fn()  # the interpreter has nothing to warm; one untimed call keeps the shape of do_bench
    start = time.perf_counter()
    fn()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


# Bytes a read-only pass goes over to evict the whole L2: do_bench's flush size (256 MB, over five times an
# H100's 50 MB L2).
FLUSH_BYTES = 256 * 2**20


def _read_flush(buf: torch.Tensor, total: torch.Tensor) -> None:
    """Reads buf on the current stream: the L2 then holds clean lines of it, so the next kernel's misses evict
    without writing back. do_bench's memset instead leaves the L2 full of dirty lines (design.md: read-flush)."""
    torch.sum(buf, dim=0, out=total)  # the contents do not matter: only that every line is read


def _read_flushed_median_ms(fn, warmup_ms: float, rep_ms: float) -> float:
    """do_bench's loop (estimate, warm up, time each run between CUDA events, median) with _read_flush
    in place of its memset before each run. The buffer lives for this call only, as do_bench's does."""
    buf = torch.ones(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    total = torch.empty((), dtype=torch.int64, device="cuda")
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        _read_flush(buf, total)
        fn()
    end.record()
    end.synchronize()
    estimate_ms = start.elapsed_time(end) / 5
    for _ in range(max(1, int(warmup_ms / estimate_ms))):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(max(1, int(rep_ms / estimate_ms)))]
    ends = [torch.cuda.Event(enable_timing=True) for _ in starts]
    for s, e in zip(starts, ends):
        _read_flush(buf, total)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def _graph_median_ms(fn, rep_ms: float) -> float:
    """Median time per fn() of ten replays of a CUDA graph holding about rep_ms of fn() calls (at
    most 1000). As triton.testing.do_bench_cudagraph, but captured thread-locally (another
    thread's work does not break the capture) and without its garbage collection and
    torch.cuda.empty_cache() at every capture, which would empty the user's cached memory."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(stream):
        fn()  # warm: compiles and allocates outside the capture
        start.record()
        for _ in range(5):
            fn()
        end.record()
        end.synchronize()
        repeat = max(1, min(1000, int(rep_ms / max(start.elapsed_time(end) / 5, 1e-3))))
        graph = torch.cuda.CUDAGraph()
        graph.capture_begin(capture_error_mode="thread_local")
        try:
            for _ in range(repeat):
                fn()
        finally:
            graph.capture_end()
        times = []
        for _ in range(10):
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / repeat)
    torch.cuda.current_stream().wait_stream(stream)
    return statistics.median(times)


def host_us_per_call(fn, calls: int = 3000, warmup: int = 50) -> float:
    """Wall time per call of fn() in microseconds, over many back-to-back calls with the GPU
    synchronized at both ends, after warmup calls: for work too small to time on the device, where
    the host's launch path is the cost."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def _interpreting() -> bool:
    from .validation import interpreting
    return interpreting()


def tflops(M: int, N: int, K: int, ms: float) -> float:
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12
