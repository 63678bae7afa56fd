// Step 6: vectorized loads, A stored transposed in shared memory.
//
// Step 5 moves data 4 bytes at a time, and its reads of A from shared memory walk down a
// column (stride BK). Here global loads and stores are float4 (16 bytes per thread per
// instruction, a quarter of the load instructions), A's tile is stored transposed
// (As[k][m]), so a thread's TM values of A are consecutive and both register fills are
// float4 reads from shared memory. Rows that are not 16-byte aligned (K or N not a
// multiple of 4) and edge tiles fall back to guarded scalar loads (load4 in common.cuh).
#include "common.cuh"

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
    vectorized_kernel(int M, int N, int K, const float* A, const float* B, float* C, bool vecA, bool vecB,
                      bool vecC) {
  constexpr int THREADS = (BM * BN) / (TM * TN);
  static_assert(BM * BK == 4 * THREADS && BK * BN == 4 * THREADS, "one float4 of A and of B per thread");
  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
  const int innerRowA = threadIdx.x / (BK / 4), innerColA = threadIdx.x % (BK / 4);
  const int innerRowB = threadIdx.x / (BN / 4), innerColB = threadIdx.x % (BN / 4);

  float acc[TM * TN] = {0.f};
  float regM[TM], regN[TN];
  for (int bk = 0; bk < K; bk += BK) {
    const float4 a = load4(A, rowBase + innerRowA, bk + innerColA * 4, M, K, K, vecA);
    As[(innerColA * 4 + 0) * BM + innerRowA] = a.x;
    As[(innerColA * 4 + 1) * BM + innerRowA] = a.y;
    As[(innerColA * 4 + 2) * BM + innerRowA] = a.z;
    As[(innerColA * 4 + 3) * BM + innerRowA] = a.w;
    *reinterpret_cast<float4*>(&Bs[innerRowB * BN + innerColB * 4]) =
        load4(B, bk + innerRowB, colBase + innerColB * 4, K, N, N, vecB);
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4*>(&regM[i]) = *reinterpret_cast<const float4*>(&As[d * BM + threadRow * TM + i]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4*>(&regN[j]) = *reinterpret_cast<const float4*>(&Bs[d * BN + threadCol * TN + j]);
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
    for (int j = 0; j < TN; j += 4)
      store4(C, make_float4(acc[i * TN + j], acc[i * TN + j + 1], acc[i * TN + j + 2], acc[i * TN + j + 3]),
             rowBase + threadRow * TM + i, colBase + threadCol * TN + j, M, N, N, vecC);
}

cudaError_t launch_vectorized(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  vectorized_kernel<BM, BN, BK, TM, TN><<<grid, (BM * BN) / (TM * TN), 0, s>>>(
      M, N, K, A, B, C, rows_aligned16(A, K), rows_aligned16(B, N), rows_aligned16(C, N));
  return cudaGetLastError();
}
