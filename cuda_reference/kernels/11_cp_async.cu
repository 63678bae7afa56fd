// Step 11: a multi-stage cp.async pipeline feeding bigger warp tiles.
//
// Step 10's tensor cores idle whenever the block waits on global memory: every slice is
// loaded, waited for, multiplied, then the next one is loaded. Three changes:
// 1. cp.async copies 16 bytes from global straight into shared memory, without passing
//    through registers and without stalling the thread that issued it. Slices are loaded
//    STAGES - 1 ahead into a ring of STAGES shared-memory buffers: at step kt a thread
//    waits (cp.async.wait_group) only for slice kt, while slices kt+1 .. kt+STAGES-2 are
//    still in flight, then refills the buffer that slice kt-1 used. One __syncthreads() per
//    step covers both hazards: slice kt has landed for every thread, and nobody still reads
//    the buffer about to be refilled. Chunks outside the matrix are zero-filled by the copy
//    itself (src-size 0). Rows that are not 16-byte aligned (K or N not a multiple of 8)
//    cannot be copied 16 bytes at a time; those operands fall back to step 10's guarded
//    loads through registers, the same buffers and barriers, just no overlap.
// 2. Each warp owns a 64 x 64 tile (4 x 8 m16n8 tiles, 128 fp32 accumulators a thread):
//    per 16-deep step 4 + 4 ldmatrix feed 32 mma.sync (step 10: 4 + 2 for 16), a third
//    less shared-memory traffic per tensor-core instruction. The block tile grows to match
//    (128 x 256 with 8 warps, or 128 x 128 with 4 warps and two blocks an SM).
// 3. Blocks are numbered along a 1D grid in groups of GROUP_M block-rows (as in Triton's
//    matmul tutorial): consecutive blocks share B's column tiles and a few of A's row
//    tiles, so on large problems the blocks running at once reuse each other's data in L2.
// Shared memory rows stay padded by 16 bytes (bank-conflict-free ldmatrix as in step 10);
// the ring is too large for static shared memory, so it is dynamic and opted into.
#include "mma.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int MIN_BLOCKS>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32, MIN_BLOCKS)
    cp_async_kernel(int M, int N, int K, const uint16_t* A, const uint16_t* B, T* C, bool vecA, bool vecB,
                    bool vecC) {
  constexpr int THREADS = (BM / WM) * (BN / WN) * 32, GROUP_M = 8;
  constexpr int LDA = BK + 8, LDB = BN + 8, A_STAGE = BM * LDA, B_STAGE = BK * LDB;
  constexpr int A_LOADS = BM * BK / 8 / THREADS, B_LOADS = BK * BN / 8 / THREADS;
  static_assert(A_LOADS * 8 * THREADS == BM * BK && B_LOADS * 8 * THREADS == BK * BN, "whole 16-byte chunks");
  static_assert(STAGES >= 2, "a ring of at least two slices");
  extern __shared__ uint4 cp_async_smem[];  // uint4: 16-byte aligned, as cp.async and ldmatrix need
  uint16_t* As = reinterpret_cast<uint16_t*>(cp_async_smem);
  uint16_t* Bs = As + STAGES * A_STAGE;

  const int2 origin = grouped_block_origin<BM, BN, GROUP_M>(M, N);  // change 3 (mma.cuh)
  const int rowBase = origin.x, colBase = origin.y;

  // Issues the copies of slice kt (columns kt*BK.. of A's rows, rows kt*BK.. of B) into buffer `stage`.
  auto load_slice = [&](int stage, int kt) {
    uint16_t* as = As + stage * A_STAGE;
    uint16_t* bs = Bs + stage * B_STAGE;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS, r = idx / (BK / 8), c = (idx % (BK / 8)) * 8;
      const int row = rowBase + r, col = k0 + c;
      if (vecA) {  // K % 8 == 0: a chunk lies wholly inside or wholly outside the matrix
        const bool in = row < M && col < K;
        cp_async16(&as[r * LDA + c], in ? A + (size_t)row * K + col : A, in ? 16 : 0);
      } else {
        *reinterpret_cast<uint4*>(&as[r * LDA + c]) = load8(A, row, col, M, K, K, false);
      }
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS, r = idx / (BN / 8), c = (idx % (BN / 8)) * 8;
      const int row = k0 + r, col = colBase + c;
      if (vecB) {
        const bool in = row < K && col < N;
        cp_async16(&bs[r * LDB + c], in ? B + (size_t)row * N + col : B, in ? 16 : 0);
      } else {
        *reinterpret_cast<uint4*>(&bs[r * LDB + c]) = load8(B, row, col, K, N, N, false);
      }
    }
  };

  const int warp = threadIdx.x / 32;
  const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
  MmaWarpTile<T, WM, WN> tile;
  tile.zero();

  const int KT = CEIL_DIV(K, BK);
  // Prologue: slices 0 .. STAGES-2 in flight, one commit group each (empty past the end,
  // so that "slice kt is group kt" holds for the waits below).
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) load_slice(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<STAGES - 2>();  // this thread's copies of slice kt have landed...
    __syncthreads();              // ...everyone's have, and everyone is done with slice kt-1
    const int next = kt + STAGES - 1;  // refill slice kt-1's buffer with slice kt+STAGES-1
    if (next < KT) load_slice(next % STAGES, next);
    cp_async_commit();
    const int stage = kt % STAGES;
    tile.template multiply<BK>(As + stage * A_STAGE + warpRow * WM * LDA, LDA, Bs + stage * B_STAGE + warpCol * WN,
                               LDB);
  }
  cp_async_wait<0>();  // only empty groups remain; leave none behind
  tile.store(C, M, N, rowBase + warpRow * WM, colBase + warpCol * WN, vecC);
}

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES, int MIN_BLOCKS>
cudaError_t launch_cp_async_t(int M, int N, int K, const void* A, const void* B, void* C, cudaStream_t s) {
  constexpr int THREADS = (BM / WM) * (BN / WN) * 32;
  constexpr int SMEM = STAGES * (BM * (BK + 8) + BK * (BN + 8)) * 2;
  constexpr auto kernel = cp_async_kernel<T, BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS>;
  cudaError_t err = opt_in_dynamic_smem<kernel>(SMEM);  // over 48 KiB (mma.cuh)
  if (err != cudaSuccess) return err;
  const long long blocks = (long long)CEIL_DIV(M, BM) * CEIL_DIV(N, BN);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<(unsigned)blocks, THREADS, SMEM, s>>>(
      M, N, K, static_cast<const uint16_t*>(A), static_cast<const uint16_t*>(B), static_cast<T*>(C),
      rows_aligned16_b16(A, K), rows_aligned16_b16(B, N), pairs_aligned_b16(C, N));
  return cudaGetLastError();
}

// 8 warps in 2 x 4, 64 x 64 each; 3 slices of 64 in flight (153 KiB of shared memory).
cudaError_t launch_cp_async_128x256x64(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                       cudaStream_t s) {
  return dtype == kBf16 ? launch_cp_async_t<__nv_bfloat16, 128, 256, 64, 64, 64, 3, 1>(M, N, K, A, B, C, s)
                        : launch_cp_async_t<__half, 128, 256, 64, 64, 64, 3, 1>(M, N, K, A, B, C, s);
}
// The same with 4 slices of 32 (106 KiB): shallower slices, one more in flight.
cudaError_t launch_cp_async_128x256x32(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                       cudaStream_t s) {
  return dtype == kBf16 ? launch_cp_async_t<__nv_bfloat16, 128, 256, 32, 64, 64, 4, 1>(M, N, K, A, B, C, s)
                        : launch_cp_async_t<__half, 128, 256, 32, 64, 64, 4, 1>(M, N, K, A, B, C, s);
}
// 4 warps in 2 x 2, 64 x 64 each, 4 slices of 32 (74 KiB): two blocks share an SM, so one's
// barrier waits are covered by the other's arithmetic.
cudaError_t launch_cp_async_128x128x32(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                       cudaStream_t s) {
  return dtype == kBf16 ? launch_cp_async_t<__nv_bfloat16, 128, 128, 32, 64, 64, 4, 2>(M, N, K, A, B, C, s)
                        : launch_cp_async_t<__half, 128, 128, 32, 64, 64, 4, 2>(M, N, K, A, B, C, s);
}
