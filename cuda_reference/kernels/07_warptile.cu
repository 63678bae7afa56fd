// Step 7: warp tiling. Between the block tile (shared memory) and the thread tile
// (registers) sits a warp tile: each warp owns a WM x WN piece of the block's C tile and
// walks it in WNITER sub-tiles, each thread an 8 x 4 patch of every sub-tile.
//
// Why: in step 6 a warp's 32 threads spread over the whole 128-wide tile, so their
// register fills from shared memory touch many rows at once. Grouping each warp's threads
// over a compact 64 x 16 sub-tile makes the values a warp reads from shared memory
// contiguous runs that it shares (broadcasts), lowering bank conflicts and shared-memory
// traffic; with BK = 16 each __syncthreads() pair covers twice the work of step 6.
// Loads are float4 with A transposed as in step 6.
#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS>
__global__ void __launch_bounds__(THREADS)
    warptile_kernel(int M, int N, int K, const float* A, const float* B, float* C, bool vecA, bool vecB,
                    bool vecC) {
  constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
  constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp per warp tile");
  static_assert(WMITER * WSUBM == WM && (WSUBM / TM) * (WSUBN / TN) == 32, "32 threads per sub-tile");
  constexpr int strideA = (THREADS * 4) / BK, strideB = THREADS / (BN / 4);
  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];

  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const int laneRow = lane / (WSUBN / TN), laneCol = lane % (WSUBN / TN);
  const int innerRowA = threadIdx.x / (BK / 4), innerColA = threadIdx.x % (BK / 4);
  const int innerRowB = threadIdx.x / (BN / 4), innerColB = threadIdx.x % (BN / 4);

  float acc[WMITER * TM * WNITER * TN] = {0.f};
  float regM[WMITER * TM], regN[WNITER * TN];
  for (int bk = 0; bk < K; bk += BK) {
#pragma unroll
    for (int off = 0; off < BM; off += strideA) {
      const float4 a = load4(A, rowBase + innerRowA + off, bk + innerColA * 4, M, K, K, vecA);
      As[(innerColA * 4 + 0) * BM + innerRowA + off] = a.x;
      As[(innerColA * 4 + 1) * BM + innerRowA + off] = a.y;
      As[(innerColA * 4 + 2) * BM + innerRowA + off] = a.z;
      As[(innerColA * 4 + 3) * BM + innerRowA + off] = a.w;
    }
#pragma unroll
    for (int off = 0; off < BK; off += strideB)
      *reinterpret_cast<float4*>(&Bs[(innerRowB + off) * BN + innerColB * 4]) =
          load4(B, bk + innerRowB + off, colBase + innerColB * 4, K, N, N, vecB);
    __syncthreads();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i)
          regM[wm * TM + i] = As[d * BM + warpRow * WM + wm * WSUBM + laneRow * TM + i];
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          regN[wn * TN + j] = Bs[d * BN + warpCol * WN + wn * WSUBN + laneCol * TN + j];
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
              acc[(wm * TM + i) * (WNITER * TN) + wn * TN + j] += regM[wm * TM + i] * regN[wn * TN + j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const float* r = &acc[(wm * TM + i) * (WNITER * TN) + wn * TN + j];
          store4(C, make_float4(r[0], r[1], r[2], r[3]), rowBase + warpRow * WM + wm * WSUBM + laneRow * TM + i,
                 colBase + warpCol * WN + wn * WSUBN + laneCol * TN + j, M, N, N, vecC);
        }
}

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS>
cudaError_t launch_warptile(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  warptile_kernel<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS><<<grid, THREADS, 0, s>>>(
      M, N, K, A, B, C, rows_aligned16(A, K), rows_aligned16(B, N), rows_aligned16(C, N));
  return cudaGetLastError();
}

// 4 warps, each a 64 x 64 warp tile in four 64 x 16 sub-tiles: 128 results per thread.
cudaError_t launch_warptile_128(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_warptile<128, 128, 16, 64, 64, 4, 8, 4, 128>(M, N, K, A, B, C, s);
}
// 8 warps, each a 64 x 32 warp tile in two 64 x 16 sub-tiles: 64 results per thread,
// twice the warps to hide latency with.
cudaError_t launch_warptile_256(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_warptile<128, 128, 16, 64, 32, 2, 8, 4, 256>(M, N, K, A, B, C, s);
}
