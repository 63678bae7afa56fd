// Step 10: the tensor-core instructions themselves, in inline PTX: ldmatrix and mma.sync.
//
// Same tiling and staging as step 9 (128 x 128 x 32 block tile, 8 warps of 64 x 32, padded
// shared-memory rows), but WMMA's 16 x 16 x 16 fragments give way to what they compile to:
// mma.sync.m16n8k16, whose register layout the PTX ISA documents (mma.cuh spells it out).
// Knowing which lane holds which element buys two things. Operands: ldmatrix.x4 loads four
// 8 x 8 matrices from shared memory straight into that layout, one instruction for an A
// fragment (16 x 16) and, with .trans, one for two B fragments (16 x 8 each) read from B's
// row-major [k][n] tile. Output: each lane knows the rows and columns of its accumulators,
// so C is rounded and stored straight from registers, two adjacent results per 4-byte
// store, with no shared-memory round trip and no second pass. The warp tile is 4 x 4
// m16n8 tiles: per 16-deep step 4 + 2 ldmatrix feed 16 mma.sync.
// The padding (8 elements, 16 bytes) matters more here: the 8 row addresses of each 8 x 8
// matrix an ldmatrix reads must hit different banks, and rows of 80 bytes (A) and 272
// bytes (B) start 5 and 17 16-byte slots apart, distinct modulo the 8 slots of a bank row.
#include "mma.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    mma_sync_kernel(int M, int N, int K, const uint16_t* A, const uint16_t* B, T* C, bool vecA, bool vecB,
                    bool vecC) {
  constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  constexpr int LDA = BK + 8, LDB = BN + 8;
  constexpr int A_LOADS = BM * BK / 8 / THREADS, B_LOADS = BK * BN / 8 / THREADS;
  static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN, "whole 16-byte loads");
  __shared__ __align__(128) uint16_t As[BM * LDA];
  __shared__ __align__(128) uint16_t Bs[BK * LDB];

  const int warp = threadIdx.x / 32;
  const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  MmaWarpTile<T, WM, WN> tile;
  tile.zero();

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS, r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&As[r * LDA + c]) = load8(A, rowBase + r, k0 + c, M, K, K, vecA);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS, r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
      *reinterpret_cast<uint4*>(&Bs[r * LDB + c]) = load8(B, k0 + r, colBase + c, K, N, N, vecB);
    }
    __syncthreads();
    tile.template multiply<BK>(&As[warpRow * WM * LDA], LDA, &Bs[warpCol * WN], LDB);
    __syncthreads();
  }
  tile.store(C, M, N, rowBase + warpRow * WM, colBase + warpCol * WN, vecC);
}

template <typename T>
cudaError_t launch_mma_sync_t(int M, int N, int K, const void* A, const void* B, void* C, cudaStream_t s) {
  constexpr int BM = 128, BN = 128, BK = 32, WM = 64, WN = 32;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  mma_sync_kernel<T, BM, BN, BK, WM, WN><<<grid, (BM / WM) * (BN / WN) * 32, 0, s>>>(
      M, N, K, static_cast<const uint16_t*>(A), static_cast<const uint16_t*>(B), static_cast<T*>(C),
      rows_aligned16_b16(A, K), rows_aligned16_b16(B, N), pairs_aligned_b16(C, N));
  return cudaGetLastError();
}

cudaError_t launch_mma_sync(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                            cudaStream_t s) {
  return dtype == kBf16 ? launch_mma_sync_t<__nv_bfloat16>(M, N, K, A, B, C, s)
                        : launch_mma_sync_t<__half>(M, N, K, A, B, C, s);
}
