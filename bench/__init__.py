"""Side-by-side benchmarks: thread-level CUDA tiling, Triton block programs, cuBLAS. Run `python -m bench`."""
