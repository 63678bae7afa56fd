// Step 4: 1D register blocking. Each thread computes TM = 8 results down a column of C.
//
// In step 3 every FMA needs two shared-memory loads. Here a thread loads one B value
// into a register and reuses it against TM values of A: (1 + TM) shared loads for TM
// FMAs. A block of 512 threads owns a 64 x 64 tile of C and steps along K by BK = 8, so
// global reads per output drop further too (the tile is 64 wide instead of 32).
#include "common.cuh"

template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__((BM * BN) / TM)
    blocktile_1d_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  static_assert(BM * BK == (BM * BN) / TM && BN * BK == (BM * BN) / TM, "one A and one B element per thread");
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int threadCol = threadIdx.x % BN, threadRow = threadIdx.x / BN;
  const int innerColA = threadIdx.x % BK, innerRowA = threadIdx.x / BK;
  const int innerColB = threadIdx.x % BN, innerRowB = threadIdx.x / BN;

  float acc[TM] = {0.f};
  for (int bk = 0; bk < K; bk += BK) {
    const int ar = rowBase + innerRowA, ac = bk + innerColA;
    As[innerRowA * BK + innerColA] = (ar < M && ac < K) ? A[(size_t)ar * K + ac] : 0.f;
    const int br = bk + innerRowB, bc = colBase + innerColB;
    Bs[innerRowB * BN + innerColB] = (br < K && bc < N) ? B[(size_t)br * N + bc] : 0.f;
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
      const float b = Bs[d * BN + threadCol];
#pragma unroll
      for (int r = 0; r < TM; ++r) acc[r] += As[(threadRow * TM + r) * BK + d] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < TM; ++r) {
    const int row = rowBase + threadRow * TM + r, col = colBase + threadCol;
    if (row < M && col < N) C[(size_t)row * N + col] = acc[r];
  }
}

cudaError_t launch_blocktile_1d(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  constexpr int BM = 64, BN = 64, BK = 8, TM = 8;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  blocktile_1d_kernel<BM, BN, BK, TM><<<grid, (BM * BN) / TM, 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}
