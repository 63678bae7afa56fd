// Step 5: 2D register blocking. Each thread computes a TM x TN = 8 x 8 patch of C.
//
// Per step along K a thread loads TM values of A and TN values of B into registers and
// does their TM * TN outer product: 16 shared loads for 64 FMAs (step 4: 9 for 8). A
// block of 256 threads owns a 128 x 128 tile, so each global element is reused 128 times.
// The 64 accumulators live in registers because every index into them is a constant
// after unrolling.
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
    blocktile_2d_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  constexpr int THREADS = (BM * BN) / (TM * TN);
  __shared__ float As[BM * BK];
  __shared__ float Bs[BK * BN];
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
  const int innerColA = threadIdx.x % BK, innerRowA = threadIdx.x / BK;
  const int innerColB = threadIdx.x % BN, innerRowB = threadIdx.x / BN;
  constexpr int strideA = THREADS / BK, strideB = THREADS / BN;

  float acc[TM * TN] = {0.f};
  float regM[TM], regN[TN];
  for (int bk = 0; bk < K; bk += BK) {
    for (int off = 0; off < BM; off += strideA) {
      const int r = rowBase + innerRowA + off, c = bk + innerColA;
      As[(innerRowA + off) * BK + innerColA] = (r < M && c < K) ? A[(size_t)r * K + c] : 0.f;
    }
    for (int off = 0; off < BK; off += strideB) {
      const int r = bk + innerRowB + off, c = colBase + innerColB;
      Bs[(innerRowB + off) * BN + innerColB] = (r < K && c < N) ? B[(size_t)r * N + c] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + d];
#pragma unroll
      for (int j = 0; j < TN; ++j) regN[j] = Bs[d * BN + threadCol * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i * TN + j] += regM[i] * regN[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int row = rowBase + threadRow * TM + i, col = colBase + threadCol * TN + j;
      if (row < M && col < N) C[(size_t)row * N + col] = acc[i * TN + j];
    }
}

cudaError_t launch_blocktile_2d(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  blocktile_2d_kernel<BM, BN, BK, TM, TN><<<grid, (BM * BN) / (TM * TN), 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}
