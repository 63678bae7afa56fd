// The warp-tile pieces shared by steps 7 and 8: staging a BK-deep slice of the block's A
// and B tiles into shared memory, one BK step of warp-tiled outer products, and storing
// the results. Step 7 explains the tiling; step 8 changes only how the slices are staged.
#pragma once
#include "common.cuh"

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int THREADS>
struct WarpTile {
  static constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
  static constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
  static constexpr int A_LOADS = (BM * BK) / (4 * THREADS), B_LOADS = (BK * BN) / (4 * THREADS);
  static constexpr int ACC = WMITER * TM * WNITER * TN;
  static_assert((BM / WM) * (BN / WN) * 32 == THREADS, "one warp per warp tile");
  static_assert(WMITER * WSUBM == WM && (WSUBM / TM) * (WSUBN / TN) == 32, "32 threads per sub-tile");
  static_assert(A_LOADS * 4 * THREADS == BM * BK && B_LOADS * 4 * THREADS == BK * BN, "whole float4s per thread");

  // Global -> registers: this thread's float4s of the A (BM x BK) and B (BK x BN) slices at k0.
  __device__ static void fetch(float4 (&ra)[A_LOADS], float4 (&rb)[B_LOADS], const float* A, const float* B,
                               int M, int N, int K, int rowBase, int colBase, int k0, bool vecA, bool vecB) {
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = t + i * THREADS;  // float4 index within the slice, BK / 4 per row
      ra[i] = load4(A, rowBase + idx / (BK / 4), k0 + (idx % (BK / 4)) * 4, M, K, K, vecA);
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = t + i * THREADS;  // BN / 4 per row
      rb[i] = load4(B, k0 + idx / (BN / 4), colBase + (idx % (BN / 4)) * 4, K, N, N, vecB);
    }
  }

  // Registers -> shared memory; A transposed (As[k][m]) so a thread's TM rows are consecutive.
  __device__ static void stash(const float4 (&ra)[A_LOADS], const float4 (&rb)[B_LOADS], float* As, float* Bs) {
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {
      const int idx = t + i * THREADS, m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
      As[(k + 0) * BM + m] = ra[i].x;
      As[(k + 1) * BM + m] = ra[i].y;
      As[(k + 2) * BM + m] = ra[i].z;
      As[(k + 3) * BM + m] = ra[i].w;
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {
      const int idx = t + i * THREADS;
      *reinterpret_cast<float4*>(&Bs[(idx / (BN / 4)) * BN + (idx % (BN / 4)) * 4]) = rb[i];
    }
  }

  // This thread's warp tile in the block (warpRow, warpCol) and its patch in each sub-tile (laneRow, laneCol).
  struct Place {
    int warpRow, warpCol, laneRow, laneCol;
  };
  __device__ static Place place() {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    return {warp / (BN / WN), warp % (BN / WN), lane / (WSUBN / TN), lane % (WSUBN / TN)};
  }

  // One BK-deep slice: per k, fill registers from the warp's sub-tiles, then their outer product.
  __device__ static void multiply(const float* As, const float* Bs, float (&acc)[ACC]) {
    const Place p = place();
    float regM[WMITER * TM], regN[WNITER * TN];
#pragma unroll
    for (int d = 0; d < BK; ++d) {
#pragma unroll
      for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i)
          regM[wm * TM + i] = As[d * BM + p.warpRow * WM + wm * WSUBM + p.laneRow * TM + i];
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          regN[wn * TN + j] = Bs[d * BN + p.warpCol * WN + wn * WSUBN + p.laneCol * TN + j];
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
  }

  __device__ static void store(float* C, const float (&acc)[ACC], int M, int N, int rowBase, int colBase, bool vecC) {
    const Place p = place();
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
      for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; j += 4) {
            const float* r = &acc[(wm * TM + i) * (WNITER * TN) + wn * TN + j];
            store4(C, make_float4(r[0], r[1], r[2], r[3]), rowBase + p.warpRow * WM + wm * WSUBM + p.laneRow * TM + i,
                   colBase + p.warpCol * WN + wn * WSUBN + p.laneCol * TN + j, M, N, N, vecC);
          }
  }
};
