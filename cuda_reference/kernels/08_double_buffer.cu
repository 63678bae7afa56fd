// Step 8: double buffering. Step 7 loads a slice, waits at a barrier, computes, waits
// again: while a block waits on global memory its warps do no arithmetic, and the
// second barrier stops them from loading early. Here each thread fetches the next
// slice into registers *before* multiplying the current one, so the global loads are in
// flight during the arithmetic; shared memory holds two slices, the one being read and
// the one being filled, so one __syncthreads() per step is enough: nobody reads the
// buffer being written until after the barrier that ends the step.
// The warp tiling itself is step 7's (warptile.cuh). The second buffer and the prefetch
// registers raise register use to 159 a thread, one 256-thread block per SM; BLOCKS_PER_SM = 2
// caps the compiler at 128 registers (no spills) so two blocks share an SM and hide each
// other's barriers. Both are built, for the benchmark to compare.
#include "warptile.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS, int BLOCKS_PER_SM>
__global__ void __launch_bounds__(THREADS, BLOCKS_PER_SM)
    double_buffer_kernel(int M, int N, int K, const float* A, const float* B, float* C, bool vecA, bool vecB,
                         bool vecC) {
  using W = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS>;
  __shared__ __align__(16) float As[2][BK * BM];
  __shared__ __align__(16) float Bs[2][BK * BN];
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  float acc[W::ACC] = {0.f};
  float4 ra[W::A_LOADS], rb[W::B_LOADS];

  W::fetch(ra, rb, A, B, M, N, K, rowBase, colBase, 0, vecA, vecB);
  W::stash(ra, rb, As[0], Bs[0]);
  __syncthreads();
  int cur = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;
    if (more) W::fetch(ra, rb, A, B, M, N, K, rowBase, colBase, k0 + BK, vecA, vecB);  // in flight...
    W::multiply(As[cur], Bs[cur], acc);                                                    // ...during this
    if (more) W::stash(ra, rb, As[cur ^ 1], Bs[cur ^ 1]);
    __syncthreads();
    cur ^= 1;
  }
  W::store(C, acc, M, N, rowBase, colBase, vecC);
}

template <int BLOCKS_PER_SM>
cudaError_t launch_double_buffer(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  constexpr int BM = 128, BN = 128, BK = 16, WM = 64, WN = 32, WNITER = 2, TM = 8, TN = 4, THREADS = 256;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  double_buffer_kernel<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS, BLOCKS_PER_SM><<<grid, THREADS, 0, s>>>(
      M, N, K, A, B, C, rows_aligned16(A, K), rows_aligned16(B, N), rows_aligned16(C, N));
  return cudaGetLastError();
}

cudaError_t launch_double_buffer_2(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_double_buffer<2>(M, N, K, A, B, C, s);
}
cudaError_t launch_double_buffer_1(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_double_buffer<1>(M, N, K, A, B, C, s);
}
