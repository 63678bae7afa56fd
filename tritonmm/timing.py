"""The one place that times kernels, for the tuner and for bench/.

On a GPU: triton.testing.do_bench (CUDA events, warm-up first, the median of many runs,
L2 flushed between runs). In Triton's CPU interpreter the same call shape is timed with
the host clock, so tuning logic can be tested without a GPU. ``calls`` counts every
timed benchmark, so a test can prove that a warm tuning cache benchmarks nothing.
"""
import statistics
import time

import torch
import triton

calls = 0


def median_ms(fn, warmup_ms: float = 25, rep_ms: float = 100, quantiles=None, graph: bool = False):
    """Median run time of fn() in milliseconds (or the given quantiles, as do_bench returns them).
    ``graph``: fn's launches replayed from a CUDA graph (_graph_median_ms), so that the device
    time is measured even where launching from Python takes longer than the kernels run."""
    global calls
    calls += 1
    if torch.cuda.is_available() and not _interpreting():
        if graph:
            assert quantiles is None, "graph timing returns the median only"
            return _graph_median_ms(fn, rep_ms)
        # do_bench returns the mean unless told otherwise; one slow outlier moves a mean.
        return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=quantiles, return_mode="median")
    fn()  # the interpreter has nothing to warm; one untimed call keeps the shape of do_bench
    start = time.perf_counter()
    fn()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


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


def host_us_per_call(fn, calls: int = 3000) -> float:
    """Wall time per call of fn() in microseconds, over many back-to-back calls with the GPU
    synchronized at both ends: for work too small to time on the device, where the host's
    launch path is the cost (notes/experiments/launch_cost.py)."""
    for _ in range(50):
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
