// Step 16: the epilogue through shared memory and TMA stores, overlapped with the next tile.
//
// Step 15 ends each tile as step 12 did: every consumer thread rounds its 128 accumulators and
// stores them to C from registers, 64 bounds-checked stores of 4 bytes, each warp's store
// touching 8 rows (8 half-used 32-byte sectors). Both consumer warpgroups finish a tile
// together, so the tensor cores idle until the last of those stores has issued and the next
// tile's products may overwrite the registers. The cost is per tile, the mainloop's length is
// K: at 4096^3 each CTA computes four tiles of 64 slices, at 8192^3 sixteen of 128, so the
// stall weighs twice as much at 4096^3, where step 15 trails cuBLAS most (0.88x; 0.97x at
// 8192^3). Three changes:
// 1. Staging. Each consumer warpgroup rounds its 64 x 256 to T and writes it to shared memory
//    as four 64 x 64 boxes with the 128-byte swizzle (tma_store.cuh), one st.shared.b32 per
//    pair of results: for each 16-byte chunk c, lane (g, t) writes rows r = 16w + g and r + 8,
//    both of swizzle phase g, at chunk c ^ g, byte 4t. A warp's 32 stores land in 8 different
//    chunks of 8 rows: 32 different banks, no conflict.
// 2. TMA stores. One thread of the warpgroup issues a cp.async.bulk.tensor store per box (a
//    third tensor map, for C) and goes on: the copy to global memory, its clipping at M and N
//    and its completion run in the TMA unit while the warpgroup starts the next tile's
//    products. What remains of the epilogue is 16 shared stores and two named barriers per box.
// 3. Reusing the staging boxes. 4 stages of the ring (192 KiB) leave room for 32 KiB: two
//    boxes per warpgroup, taken in turn (box q of a tile into buffer q % 2). Before a buffer
//    is written again, the issuing thread waits until the store that last read it has finished
//    reading (cp.async.bulk.wait_group.read 1: only the most recent store, from the other
//    buffer, may still be reading), and a named barrier of the warpgroup (ids 1 and 2; 0 is
//    __syncthreads) passes that on; writes reach the store through fence.proxy.async and the
//    next named barrier. With 3 stages (144 KiB) there is room for four boxes per warpgroup,
//    a whole tile, and no wait within a tile: stages=3 trades a ring stage for that. Both are
//    built (tma_store_4, the default, and tma_store_3) for the timing to choose.
// C needs a 16-byte aligned start for its tensor map (its rows are then aligned too: N is a
// multiple of 8, as B's map already requires); when it is not, the epilogue falls back to step
// 15's stores from registers. The mainloop, its barriers and phase parities, the clusters, the
// multicast of B and the tile order are step 15's (and its grouped_tile: the .cu files build
// as one translation unit, in order), so every product is summed in step 12's order and C is
// step 12's, bit for bit. sm_90a only: the launcher refuses other GPUs.
#include "tma_store.cuh"

// Shared memory of step 16 for a ring of STAGES: [ring][staging: CBUF boxes per consumer
// warpgroup][STAGES full barriers][STAGES empty barriers], from a 1024-byte boundary.
template <int STAGES>
struct TmaStoreLayout {
  static constexpr int CBUF = STAGES >= 4 ? 2 : 4;  // staging boxes per consumer warpgroup
  static constexpr int RING = STAGES * kTmaStageBytes, STAGING = 2 * CBUF * kTmaCBoxBytes;
  static constexpr int SMEM = 1024 + RING + STAGING + 2 * STAGES * 8;  // + room to align the ring
  static_assert(SMEM <= 232448, "227 KiB: the most dynamic shared memory a block may opt into on compute 9.0");
  static_assert(4 % CBUF == 0, "a tile's four boxes cycle through the buffers: buffer = box count % CBUF");
};

template <typename T, int STAGES>
__global__ void __launch_bounds__(384, 1)
    tma_store_kernel(int M, int N, int K, const __grid_constant__ CUtensorMap mapA,
                     const __grid_constant__ CUtensorMap mapB, const __grid_constant__ CUtensorMap mapC, T* C,
                     bool tmaC, bool vecC) {
#if WGMMA_AVAILABLE
  using L = TmaStoreLayout<STAGES>;
  constexpr int GROUP = 8, CONSUMER_WARPS = 8, CLUSTER = 2, CBUF = L::CBUF;
  extern __shared__ uint4 tma_store_smem[];
  uint8_t* smem = align1024(tma_store_smem);
  // The same offsets in both CTAs of a cluster (same kernel, same layout): the multicast and the
  // remote arrivals address the peer's buffers and barriers by them. The staging boxes start
  // on a 1024-byte boundary (the ring is 48 KiB stages), as the 128-byte swizzle needs.
  const uint32_t ring = smem_u32(smem), staging = ring + L::RING;
  const uint32_t full = staging + L::STAGING, empty = full + 8 * STAGES;

  const int rank = cluster_ctarank();  // 0 or 1: which tile of the pair
  const int cluster = cluster_id_x(), clusters = cluster_count_x();
  const int tilesN = CEIL_DIV(N, kTmaBN), pairRows = CEIL_DIV(CEIL_DIV(M, kTmaBM), CLUSTER);
  const int tiles = pairRows * tilesN, KT = CEIL_DIV(K, kTmaBK);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);                          // this CTA's producer's expect_tx
      mbar_init(empty + 8 * s, CLUSTER * CONSUMER_WARPS);  // every consumer warp of both CTAs
    }
    fence_mbarrier_init();
  }
  cluster_sync();   // both CTAs' barriers exist before either producer multicasts
  __syncthreads();  // (implied by the cluster barrier; spelled out for compute-sanitizer's racecheck)

  if (threadIdx.x < 128) {  // the producer warpgroup: step 15's, unchanged
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&mapA);
      prefetch_tensormap(&mapB);
      if (tmaC) prefetch_tensormap(&mapC);
      int it = 0;  // slices loaded so far, over all of this block's tiles
      for (int t = cluster; t < tiles; t += clusters) {
        const int2 pt = grouped_tile(t, pairRows, tilesN, GROUP);
        const int row0 = (pt.x * CLUSTER + rank) * kTmaBM, col0 = pt.y * kTmaBN;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          const uint32_t stage = ring + s * kTmaStageBytes, bar = full + 8 * s;
          if (it >= STAGES) mbar_wait(empty + 8 * s, (it / STAGES - 1) & 1);  // both CTAs are done with it
          mbar_arrive_expect_tx(bar, tma_stage_bytes(row0, col0, M, N));
          if (row0 < M) tma_load_2d(stage, &mapA, kt * kTmaBK, row0, bar);
#pragma unroll
          for (int j = rank; j < 4; j += CLUSTER)  // this CTA's half of B, into both CTAs
            if (col0 + 64 * j < N)
              tma_load_2d_multicast(stage + kTmaABytes + j * kTmaBBoxBytes, &mapB, col0 + 64 * j, kt * kTmaBK, bar,
                                    (1 << CLUSTER) - 1);
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();  // a consumer warpgroup
    const int wg = threadIdx.x / 128 - 1, lane = threadIdx.x % 32;
    const bool issuer = threadIdx.x % 128 == 0;  // issues the warpgroup's TMA stores (change 2)
    // This thread's place in a staging box (change 1): rows r and r + 8 of the warpgroup's 64,
    // both of swizzle phase g = r % 8; the 4 bytes at 4t of each 16-byte chunk.
    const int g = lane / 4, t = lane % 4, r = (threadIdx.x / 32 % 4) * 16 + g;
    const uint32_t boxes = staging + wg * CBUF * kTmaCBoxBytes;  // this warpgroup's CBUF boxes
    int it = 0;  // slices consumed so far, in step with the producer's count
    for (int tile = cluster; tile < tiles; tile += clusters) {
      const int2 pt = grouped_tile(tile, pairRows, tilesN, GROUP);
      const int row0 = (pt.x * CLUSTER + rank) * kTmaBM, col0 = pt.y * kTmaBN;
      float acc[128];
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.f;
      for (int kt = 0; kt < KT; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(full + 8 * s, (it / STAGES) & 1);  // slice `it` has landed, all 48 KiB of it
        wgmma_fence();
        wgmma_slice<T>(acc, ring + s * kTmaStageBytes, wg);
        wgmma_commit();
        wgmma_wait<1>();  // this warp's products of slice it-1 are done: release its buffer in both CTAs
        if (kt > 0) mbar_arrive_cluster_if(empty + 8 * ((it - 1) % STAGES), lane % CLUSTER, lane < CLUSTER);
      }
      wgmma_wait<0>();  // the tile's last slice too: release it, the ring runs on into the next tile
      mbar_arrive_cluster_if(empty + 8 * ((it - 1) % STAGES), lane % CLUSTER, lane < CLUSTER);
#pragma unroll
      for (int i = 0; i < 128; ++i) fence_operand(acc[i]);
      if (tmaC) {
        const int wrow = row0 + 64 * wg;  // the warpgroup's first row of C
#pragma unroll
        for (int q = 0; q < 4; ++q) {  // box q: columns 64q .. 64q + 63 of the warpgroup's 64 x 256
          const uint32_t box = boxes + (q % CBUF) * kTmaCBoxBytes;
          if (issuer) bulk_wait_group_read<CBUF - 1>();  // the store that last read this buffer is done reading
          warpgroup_barrier(wg);  // ... and every thread of the warpgroup knows it
#pragma unroll
          for (int c = 0; c < 8; ++c) {  // chunk c of the box's rows: accumulator column block j = 8q + c
            const int j = 8 * q + c;
            const uint32_t at = box + r * 128 + ((c ^ g) << 4) + 4 * t;
            st_shared_b32(at, Half16<T>::round2(acc[4 * j], acc[4 * j + 1]));                // row r
            st_shared_b32(at + 8 * 128, Half16<T>::round2(acc[4 * j + 2], acc[4 * j + 3]));  // row r + 8
          }
          fence_proxy_async();    // this thread's writes, visible to the TMA's reads ...
          warpgroup_barrier(wg);  // ... once every thread's are
          if (issuer) {
            if (wrow < M && col0 + 64 * q < N) tma_store_2d(&mapC, box, col0 + 64 * q, wrow);  // clipped at M, N
            bulk_commit_group();  // one group per box, empty if skipped: wait_group counts boxes
          }
        }
      } else {
        store_wgmma_tile(C, acc, M, N, row0 + wg * 64, col0, vecC);  // C unaligned: step 15's stores
      }
    }
    if (issuer) bulk_wait_group<0>();  // every store of this warpgroup complete before the CTA may exit
  }
  // No thread has left: the peer may still arrive on this CTA's empty barriers until it is done.
  cluster_sync();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  __trap();  // sm_90 code without the sm_90a features: never run silently (see 12_wgmma.cu)
#endif  // WGMMA_AVAILABLE
}

template <typename T, int STAGES>
cudaError_t launch_tma_store_t(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                               cudaStream_t s) {
  constexpr int SMEM = TmaStoreLayout<STAGES>::SMEM;
  constexpr auto kernel = tma_store_kernel<T, STAGES>;
  CUtensorMap mapA, mapB, mapC = {};
  cudaError_t err = encode_tile_maps(&mapA, &mapB, M, N, K, A, B, dtype);
  if (err != cudaSuccess) return err;
  // C through the TMA when it starts 16-byte aligned: 64 x 64 boxes, the 128-byte swizzle.
  const bool tmaC = reinterpret_cast<size_t>(C) % 16 == 0;
  if (tmaC) {
    err = encode_tma_2d(&mapC, C, dtype, M, N, 64, 64);
    if (err != cudaSuccess) return err;
  }
  return launch_on_clusters<kernel>(M, N, SMEM, s, M, N, K, mapA, mapB, mapC, static_cast<T*>(C), tmaC,
                                    pairs_aligned_b16(C, N));
}

template <int STAGES>
cudaError_t launch_tma_store_stages(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                    cudaStream_t s) {
#ifdef CUDA_REFERENCE_SM90A
  bool sm90 = false;
  cudaError_t err = current_device_is_sm90(&sm90);
  if (err != cudaSuccess) return err;
  if (sm90)
    return dtype == kBf16 ? launch_tma_store_t<__nv_bfloat16, STAGES>(M, N, K, A, B, C, dtype, s)
                          : launch_tma_store_t<__half, STAGES>(M, N, K, A, B, C, dtype, s);
#endif
  return cudaErrorNoKernelImageForDevice;
}

// Persistent 2-CTA clusters of 128 x 256 x 64 blocks with the TMA-store epilogue: 4 stages and
// two staging boxes per consumer warpgroup, or 3 stages and four. Compute capability 9.0 with
// sm_90a code only; A and B rows 16-byte aligned.
cudaError_t launch_tma_store_4(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                               cudaStream_t s) {
  return launch_tma_store_stages<4>(M, N, K, A, B, C, dtype, s);
}
cudaError_t launch_tma_store_3(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                               cudaStream_t s) {
  return launch_tma_store_stages<3>(M, N, K, A, B, C, dtype, s);
}
