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
#include "warptile.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS>
__global__ void __launch_bounds__(THREADS)
    warptile_kernel(int M, int N, int K, const float* A, const float* B, float* C, bool vecA, bool vecB,
                    bool vecC) {
  using W = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, THREADS>;
  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  float acc[W::ACC] = {0.f};
  float4 ra[W::A_LOADS], rb[W::B_LOADS];
  for (int k0 = 0; k0 < K; k0 += BK) {
    W::fetch(ra, rb, A, B, M, N, K, rowBase, colBase, k0, vecA, vecB);
    W::stash(ra, rb, As, Bs);
    __syncthreads();
    W::multiply(As, Bs, acc);
    __syncthreads();  // before the next slice overwrites As and Bs
  }
  W::store(C, acc, M, N, rowBase, colBase, vecC);
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
