// Step 17: back to fp32 on CUDA cores: the warp tile of steps 7 and 8 laid out for conflict-free
// 16-byte shared loads, and its sizes chosen for the H100, several of them built side by side.
//
// Steps 7 and 8 stop at about 0.8x cuBLAS's SGEMM on an H100. siboehm's SGEMM_CUDA got its
// warptile kernel (its kernel 10, step 7's design) to about 94% of cuBLAS on an A6000 by
// autotuning BM, BN, BK, WM, WN, TM, TN and the thread count for that GPU; the H100 has other
// proportions (228 KiB of shared memory and 64 K registers an SM, 4 x 32 fp32 lanes). This
// step keeps step 8's pipeline and changes the warp tile:
// 1. Layout. Each thread owns TM x TN results as (TM / 4) x (TN / 4) sub-blocks of 4 x 4, and
//    the sub-blocks of the warp's threads interleave: sub-block (a, b) of lane (lr, lc) covers
//    rows a * 4 * LR + 4 lr .. + 3 and columns b * 4 * LC + 4 lc .. + 3 of the warp tile (LR x LC
//    = 8 x 4 lanes). Per k a thread reads its A values as TM / 4 float4 and its B values as
//    TN / 4 float4; in each such load the warp's 8 (or 4) distinct addresses are consecutive
//    16-byte chunks, so every LDS.128 is conflict-free and broadcast to the lanes that share it
//    (CUTLASS's SIMT SGEMM layout). Step 7's thread held TM = 8 consecutive rows, whose loads
//    span 256 bytes and collide two ways on the banks.
// 2. Transposed A without store conflicts. A is stored k-major (As[k][m]) as in steps 6-8, its
//    rows padded by 4 floats: with BK = 8 the two float4s of a row (k 0-3 and 4-7) then land 16
//    banks apart, and a warp's scalar stores hit 32 different banks.
// 3. Sizes. The block tile, BK, the warp tile and the threads are template parameters; the
//    variants built (KERNELS["warptile_tuned"]) span 8 x 8 results a thread at two blocks an SM
//    (registers capped at 128; BK 8) or one (BK 16), 8 x 16 or 16 x 8 at one block of 256
//    threads, and 8 x 16 at two blocks of 128 threads: one device run times them all against
//    SGEMM. 8 x 16 spends 6 shared loads per 128 FFMA, 8 x 8 4 per 64: on a GPU without dual
//    issue, the larger thread tile leaves more issue slots to the FFMAs.
// 4. Order. The outer product walks each row of the thread tile left to right and the next one right
//    to left (a serpentine), so consecutive FFMAs share an operand at every turn as well as along a
//    row: the operand reuse cache then holds one of the three sources more often, and the FFMAs wait
//    less on register-bank conflicts (Nsight Compute's "dispatch" stalls were 2-4x cuBLAS's). The
//    results are bit for bit the same (each sum still runs over k in order). 128x256x16: 0.890 ->
//    0.905x SGEMM at 4096^3, 0.895 -> 0.913x at 8192^3; 128x256x8_g8 lost (0.889 -> 0.838);
//    j-outer order lost everywhere (0.77-0.81x; H100, 2026-11-27; design.md: ladder-fp32-schedule).
// Unchanged from step 8: each slice is fetched from global memory into registers while the
// previous one is multiplied, two shared-memory buffers, one __syncthreads per slice, float4
// loads and stores where rows are 16-byte aligned (else guarded scalar ones). The buffers are
// dynamic shared memory (BK 16 on the wide tiles needs over the 48 KiB of a static array), and
// the variants named _g8 walk the tiles in groups of 8 rows (tile_of_block) for the L2.
#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int THREADS>
struct TunedTile {
  static constexpr int LR = WM / TM, LC = WN / TN;  // lanes down and across the warp tile
  static constexpr int MS = TM / 4, NS = TN / 4;    // 4 x 4 sub-blocks a thread, down and across
  static constexpr int LDA = BM + 4;                // floats per k of the transposed, padded A slice
  static constexpr int A_LOADS = BM * BK / 4 / THREADS, B_LOADS = BK * BN / 4 / THREADS;
  static constexpr int A_STAGE = BK * LDA, B_STAGE = BK * BN;  // floats per buffer
  static_assert(LR * LC == 32 && LR * TM == WM && LC * TN == WN, "a warp tile of 32 lanes");
  static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp per warp tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 sub-blocks and loads");
  static_assert(A_LOADS * 4 * THREADS == BM * BK && B_LOADS * 4 * THREADS == BK * BN, "whole float4s a thread");

  // Global -> registers: this thread's float4s of the A (BM x BK) and B (BK x BN) slices at k0.
  __device__ static void fetch(float4 (&ra)[A_LOADS], float4 (&rb)[B_LOADS], const float* A, const float* B, int M,
                               int N, int K, int rowBase, int colBase, int k0, bool vecA, bool vecB) {
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS;  // BK / 4 float4s per row of A's slice
      ra[i] = load4(A, rowBase + idx / (BK / 4), k0 + (idx % (BK / 4)) * 4, M, K, K, vecA);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS;  // BN / 4 float4s per row of B's slice
      rb[i] = load4(B, k0 + idx / (BN / 4), colBase + (idx % (BN / 4)) * 4, K, N, N, vecB);
    }
  }

  // Registers -> one shared-memory buffer: A transposed (As[k * LDA + m]), B as it is (Bs[k * BN + n]).
  __device__ static void stash(const float4 (&ra)[A_LOADS], const float4 (&rb)[B_LOADS], float* As, float* Bs) {
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS, m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
      As[(k + 0) * LDA + m] = ra[i].x;
      As[(k + 1) * LDA + m] = ra[i].y;
      As[(k + 2) * LDA + m] = ra[i].z;
      As[(k + 3) * LDA + m] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = threadIdx.x + i * THREADS;
      *reinterpret_cast<float4*>(&Bs[(idx / (BN / 4)) * BN + (idx % (BN / 4)) * 4]) = rb[i];
    }
  }

  // This thread's first row of A and first column of B in the block tile (sub-block 0, 0).
  __device__ static int2 origin() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    return make_int2((warp / (BN / WN)) * WM + (lane / LC) * 4, (warp % (BN / WN)) * WN + (lane % LC) * 4);
  }

  // One BK-deep slice: per k, MS + NS float4 loads, then the TM x TN outer product.
  __device__ static void multiply(const float* As, const float* Bs, float (&acc)[TM][TN]) {
    const int2 o = origin();
#pragma unroll
    for (int d = 0; d < BK; ++d) {
      float a[TM], b[TN];
#pragma unroll
      for (int s = 0; s < MS; ++s)
        *reinterpret_cast<float4*>(&a[4 * s]) = *reinterpret_cast<const float4*>(&As[d * LDA + o.x + s * 4 * LR]);
#pragma unroll
      for (int s = 0; s < NS; ++s)
        *reinterpret_cast<float4*>(&b[4 * s]) = *reinterpret_cast<const float4*>(&Bs[d * BN + o.y + s * 4 * LC]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const int jj = (i & 1) ? TN - 1 - j : j;  // serpentine (header, 4)
          acc[i][jj] += a[i] * b[jj];
        }
    }
  }

  // Each sub-block row as one float4 (bounds-checked: store4 drops what lies outside M x N).
  __device__ static void store(float* C, const float (&acc)[TM][TN], int M, int N, int rowBase, int colBase,
                               bool vecC) {
    const int2 o = origin();
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int s = 0; s < NS; ++s)
        store4(C, make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]),
               rowBase + o.x + (i / 4) * 4 * LR + i % 4, colBase + o.y + s * 4 * LC, M, N, N, vecC);
  }
};

// The block's tile of C: blockIdx in grid order, or, with GROUP > 0, grouped like Triton's GROUP_M: consecutive
// blocks walk GROUP rows of tiles down before moving one column right, so the blocks resident at once share B's
// column panels (and A's row panels) in the L2 instead of each wave streaming all of B from HBM.
template <int GROUP>
__device__ __forceinline__ int2 tile_of_block() {
  if (GROUP == 0) return make_int2(blockIdx.y, blockIdx.x);
  const int pid = blockIdx.y * gridDim.x + blockIdx.x, per_group = GROUP * gridDim.x;
  const int first = (pid / per_group) * GROUP, rows = min((int)gridDim.y - first, GROUP);
  return make_int2(first + (pid % per_group) % rows, (pid % per_group) / rows);
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int THREADS, int MIN_BLOCKS, int GROUP>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    warptile_tuned_kernel(int M, int N, int K, const float* A, const float* B, float* C, bool vecA, bool vecB,
                          bool vecC) {
  using W = TunedTile<BM, BN, BK, WM, WN, TM, TN, THREADS>;
  // Dynamic shared memory: two A and two B buffers; BK 16 on a 128 x 256 tile needs 48.5 KiB, over the
  // 48 KiB a static array may take.
  extern __shared__ __align__(16) float smem[];
  float* const As = smem;                    // As + cur * A_STAGE: buffer cur of A
  float* const Bs = smem + 2 * W::A_STAGE;   // Bs + cur * B_STAGE: buffer cur of B
  const int2 tile = tile_of_block<GROUP>();
  const int rowBase = tile.x * BM, colBase = tile.y * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  float4 ra[W::A_LOADS], rb[W::B_LOADS];

  W::fetch(ra, rb, A, B, M, N, K, rowBase, colBase, 0, vecA, vecB);
  W::stash(ra, rb, As, Bs);
  __syncthreads();
  int cur = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {  // step 8's pipeline
    const bool more = k0 + BK < K;
    if (more) W::fetch(ra, rb, A, B, M, N, K, rowBase, colBase, k0 + BK, vecA, vecB);  // in flight...
    W::multiply(As + cur * W::A_STAGE, Bs + cur * W::B_STAGE, acc);                        // ...during this
    if (more) W::stash(ra, rb, As + (cur ^ 1) * W::A_STAGE, Bs + (cur ^ 1) * W::B_STAGE);  // read by all last step
    __syncthreads();
    cur ^= 1;
  }
  W::store(C, acc, M, N, rowBase, colBase, vecC);
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int THREADS, int MIN_BLOCKS, int GROUP = 0>
cudaError_t launch_warptile_tuned(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  using W = TunedTile<BM, BN, BK, WM, WN, TM, TN, THREADS>;
  constexpr auto kernel = warptile_tuned_kernel<BM, BN, BK, WM, WN, TM, TN, THREADS, MIN_BLOCKS, GROUP>;
  const int rows = CEIL_DIV(M, BM);
  if (rows > 65535) return cudaErrorInvalidConfiguration;  // gridDim.y
  const int bytes = 2 * (W::A_STAGE + W::B_STAGE) * (int)sizeof(float);
  cudaError_t err = opt_in_dynamic_smem<kernel>(bytes);
  if (err != cudaSuccess) return err;
  dim3 grid(CEIL_DIV(N, BN), rows);
  kernel<<<grid, THREADS, bytes, s>>>(M, N, K, A, B, C, rows_aligned16(A, K), rows_aligned16(B, N),
                                      rows_aligned16(C, N));
  return cudaGetLastError();
}

// The variants, named BMxBNxBK_threads (KERNELS["warptile_tuned"].params["config"]):
// 8 warps of 64 x 32 (8 x 8 a thread). BK 8: registers capped at 128 for two blocks an SM. BK 16:
// one block an SM (its 16 prefetch registers do not fit under 128 without spilling them, and a
// spilled prefetch stalls on its global load at the spill store, undoing the pipeline).
cudaError_t launch_warptile_tuned_128x128x8_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                  cudaStream_t s) {
  return launch_warptile_tuned<128, 128, 8, 64, 32, 8, 8, 256, 2>(M, N, K, A, B, C, s);
}
cudaError_t launch_warptile_tuned_128x128x16_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                   cudaStream_t s) {
  return launch_warptile_tuned<128, 128, 16, 64, 32, 8, 8, 256, 1>(M, N, K, A, B, C, s);
}
// 8 warps of 64 x 64 (8 x 16 a thread) or 128 x 32 (16 x 8), one block an SM.
cudaError_t launch_warptile_tuned_128x256x8_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                  cudaStream_t s) {
  return launch_warptile_tuned<128, 256, 8, 64, 64, 8, 16, 256, 1>(M, N, K, A, B, C, s);
}
cudaError_t launch_warptile_tuned_256x128x8_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                  cudaStream_t s) {
  return launch_warptile_tuned<256, 128, 8, 128, 32, 16, 8, 256, 1>(M, N, K, A, B, C, s);
}
// 4 warps of 64 x 64 (8 x 16 a thread), two blocks an SM.
cudaError_t launch_warptile_tuned_128x128x8_128t(int M, int N, int K, const float* A, const float* B, float* C,
                                                  cudaStream_t s) {
  return launch_warptile_tuned<128, 128, 8, 64, 64, 8, 16, 128, 2>(M, N, K, A, B, C, s);
}
// BK 16 on the wide tiles: half the barriers and loop overhead per FFMA, 24 prefetch registers (one block an SM).
cudaError_t launch_warptile_tuned_128x256x16_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                   cudaStream_t s) {
  return launch_warptile_tuned<128, 256, 16, 64, 64, 8, 16, 256, 1>(M, N, K, A, B, C, s);
}
cudaError_t launch_warptile_tuned_256x128x16_256t(int M, int N, int K, const float* A, const float* B, float* C,
                                                   cudaStream_t s) {
  return launch_warptile_tuned<256, 128, 16, 128, 32, 16, 8, 256, 1>(M, N, K, A, B, C, s);
}
// The wide tiles in grouped order (tile_of_block, 8 rows of tiles a group).
cudaError_t launch_warptile_tuned_128x256x8_256t_g8(int M, int N, int K, const float* A, const float* B, float* C,
                                                     cudaStream_t s) {
  return launch_warptile_tuned<128, 256, 8, 64, 64, 8, 16, 256, 1, 8>(M, N, K, A, B, C, s);
}
cudaError_t launch_warptile_tuned_128x256x16_256t_g8(int M, int N, int K, const float* A, const float* B, float* C,
                                                      cudaStream_t s) {
  return launch_warptile_tuned<128, 256, 16, 64, 64, 8, 16, 256, 1, 8>(M, N, K, A, B, C, s);
}
// BK 16 with the warps 4 down and 2 across (32 x 128 warp tiles, 4 x 8 lanes): a warp's A loads touch 4
// distinct 16-byte chunks and its B loads 8, against 8 and 4 with 64 x 64 warp tiles.
cudaError_t launch_warptile_tuned_128x256x16_256t_4x2(int M, int N, int K, const float* A, const float* B, float* C,
                                                       cudaStream_t s) {
  return launch_warptile_tuned<128, 256, 16, 32, 128, 8, 16, 256, 1>(M, N, K, A, B, C, s);
}
