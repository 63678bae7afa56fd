// Step 9: tensor cores, through the WMMA API. From here on the inputs are fp16 or bf16
// (accumulated in fp32, C rounded back to the input type).
//
// Steps 5-8 spend one FMA instruction per multiply-add of a thread's register tile. A
// tensor core does a whole 16 x 16 x 16 product per warp-wide instruction: the warp hands
// it "fragments" of A, B and C, opaque register arrays spread over the 32 lanes, and
// nvcuda::wmma hides which lane holds which element. The tiling above it is step 7's:
// a 128 x 128 block tile, 8 warps each owning a 64 x 32 warp tile, which is now a 4 x 2
// grid of 16 x 16 accumulator fragments. Per BK = 32 slice a warp loads 4 A and 2 B
// fragments per 16-deep half from shared memory (load_matrix_sync) and issues 8 mma_syncs.
// Shared-memory rows are padded by 8 elements (16 bytes) so the 8 rows a fragment load
// reads at once fall in different banks. Staging is step 7's: 16-byte loads into
// registers, zero outside the matrix, scalar loads when rows are not 16-byte aligned.
// The fragments' element layout being opaque, C goes out through shared memory: each warp
// stores one accumulator fragment to a 16 x 16 fp32 scratch tile, then its lanes round and
// write the elements that lie inside C.
#include <mma.h>

#include "fp16.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    wmma_kernel(int M, int N, int K, const uint16_t* A, const uint16_t* B, T* C, bool vecA, bool vecB) {
  using namespace nvcuda;
  constexpr int THREADS = (BM / WM) * (BN / WN) * 32, WARPS = THREADS / 32, FM = WM / 16, FN = WN / 16;
  constexpr int LDA = BK + 8, LDB = BN + 8;  // padded row lengths, in elements
  constexpr int A_LOADS = BM * BK / 8 / THREADS, B_LOADS = BK * BN / 8 / THREADS;
  static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN, "whole 16-byte loads");
  // load_matrix_sync wants 32-byte aligned fragment corners: rows of LDA/LDB elements are
  // 16-byte multiples and fragment corners sit 16 rows apart, so __align__(128) suffices.
  __shared__ __align__(128) T As[BM * LDA];
  __shared__ __align__(128) T Bs[BK * LDB];
  __shared__ __align__(128) float scratch[WARPS][16 * 16];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  const int rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {  // A slice: BM rows of BK / 8 16-byte chunks
      const int idx = threadIdx.x + i * THREADS, r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&As[r * LDA + c]) = load8(A, rowBase + r, k0 + c, M, K, K, vecA);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {  // B slice: BK rows of BN / 8 chunks
      const int idx = threadIdx.x + i * THREADS, r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
      *reinterpret_cast<uint4*>(&Bs[r * LDB + c]) = load8(B, k0 + r, colBase + c, K, N, N, vecB);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], &As[(warpRow * WM + i * 16) * LDA + kk], LDA);
#pragma unroll
      for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(b[j], &Bs[kk * LDB + warpCol * WN + j * 16], LDB);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // before the next slice overwrites As and Bs
  }

  float* mine = scratch[warp];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      wmma::store_matrix_sync(mine, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int row0 = rowBase + warpRow * WM + i * 16, col0 = colBase + warpCol * WN + j * 16;
      for (int e = lane; e < 16 * 16; e += 32) {  // lanes 0-15 one row, 16-31 the next
        const int row = row0 + e / 16, col = col0 + e % 16;
        if (row < M && col < N) C[(size_t)row * N + col] = Half16<T>::round(mine[e]);
      }
      __syncwarp();  // before the next fragment overwrites the scratch tile
    }
}

template <typename T>
cudaError_t launch_wmma_t(int M, int N, int K, const void* A, const void* B, void* C, cudaStream_t s) {
  constexpr int BM = 128, BN = 128, BK = 32, WM = 64, WN = 32;
  dim3 grid(CEIL_DIV(N, BN), CEIL_DIV(M, BM));
  wmma_kernel<T, BM, BN, BK, WM, WN><<<grid, (BM / WM) * (BN / WN) * 32, 0, s>>>(
      M, N, K, static_cast<const uint16_t*>(A), static_cast<const uint16_t*>(B), static_cast<T*>(C),
      rows_aligned16_b16(A, K), rows_aligned16_b16(B, N));
  return cudaGetLastError();
}

cudaError_t launch_wmma(int M, int N, int K, const void* A, const void* B, void* C, int dtype, cudaStream_t s) {
  return dtype == kBf16 ? launch_wmma_t<__nv_bfloat16>(M, N, K, A, B, C, s)
                        : launch_wmma_t<__half>(M, N, K, A, B, C, s);
}
