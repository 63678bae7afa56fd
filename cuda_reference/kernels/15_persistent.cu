// Step 15: a persistent grid of 2-CTA clusters, B multicast to both CTAs by the TMA.
//
// Step 14 launches one block per 128 x 256 tile: at 4096^3 that is 512 blocks for 132 SMs, and
// each block pays its start (barrier set-up, the ring filling from empty) and its epilogue with
// the tensor cores idle, since no second block fits beside it (192 KiB of ring). Neighbouring
// blocks also each read the same B slices from L2. Three changes:
// 1. Persistent grid. As many blocks as fit at once (2 per cluster x the number of clusters
//    the GPU can hold, cudaOccupancyMaxActiveClusters: about one per SM), each walking tiles
//    t = cluster, cluster + clusters, ... until all are done. The ring and its barrier phases
//    run on across tiles (slice counter `it` over the block's whole walk), so the producer
//    fills the next tile's first slices while the consumers store the last tile.
// 2. Tile order. Both CTAs of a cluster work on vertically adjacent tiles (rows 256 cm ..
//    256 cm + 255, the same 256 columns): t walks a grid of 256 x 256 pair tiles in step 11's
//    grouped order (8 pair rows at a time, down each column of tiles), so the clusters running
//    at once share A rows and B columns in L2.
// 3. Clusters and multicast. The two CTAs need the same B slice: each loads two of its four
//    64 x 64 boxes and multicasts them into both CTAs' shared memory (cp.async.bulk.tensor
//    .multicast::cluster, mask 0b11), each box's bytes completing on the full barrier of the
//    CTA it lands in. So B crosses L2 once per pair, and each full barrier still expects 48 KiB
//    (its A box, its own two B boxes, its peer's two). A CTA's buffer is now written by both
//    producers, so a buffer may be refilled only when both CTAs' consumers are done with it:
//    every consumer warp releases a buffer in both CTAs (lane 0 on rank 0's empty barrier,
//    lane 1 on rank 1's, through mapa), and an empty barrier completes on 16 arrivals (8 warps
//    x 2 CTAs). A peer's bytes may land before this CTA's own expect_tx: the tx-count goes
//    negative, but the phase cannot complete while the producer's arrival is outstanding.
//    The barriers must exist before a peer touches them, and a CTA must not exit while its
//    peer may still arrive on its barriers: a cluster barrier at the start and at the end.
// Any M: a pair tile hanging below the matrix gives its rank-1 CTA rows >= M, whose A box is
// not loaded (nor expected) and whose stores are dropped, while it still multicasts its half
// of B. Tests and compute-sanitizer runs can cap the grid with CUDA_REFERENCE_MAX_CLUSTERS
// (e.g. 1) so that every CTA walks many tiles. Producer / consumer roles, registers, stages
// and the epilogue are step 14's. sm_90a only: the launcher refuses other GPUs.
#include "tma.cuh"

// Pair tile t (of tilesM x tilesN, in tiles) in grouped order: GROUP tile rows at a time, down
// each column of tiles (mma.cuh's grouped_block_origin for an explicit index).
__device__ __forceinline__ int2 grouped_tile(int t, int tilesM, int tilesN, int group) {
  const int perGroup = group * tilesN, firstM = (t / perGroup) * group;
  const int groupRows = min(tilesM - firstM, group), inGroup = t % perGroup;
  return make_int2(firstM + inGroup % groupRows, inGroup / groupRows);
}

template <typename T, int STAGES>
__global__ void __launch_bounds__(384, 1)
    persistent_kernel(int M, int N, int K, const __grid_constant__ CUtensorMap mapA,
                      const __grid_constant__ CUtensorMap mapB, T* C, bool vecC) {
#if WGMMA_AVAILABLE
  constexpr int GROUP = 8, CONSUMER_WARPS = 8, CLUSTER = 2;
  extern __shared__ uint4 persistent_smem[];
  uint8_t* smem = align1024(persistent_smem);  // the ring, STAGES full, STAGES empty barriers
  // The same offsets in both CTAs (same kernel, same dynamic shared memory layout): the
  // multicast and the remote arrivals address the peer's buffers and barriers by them.
  const uint32_t ring = smem_u32(smem), full = ring + STAGES * kTmaStageBytes, empty = full + 8 * STAGES;

  const int rank = cluster_ctarank();                                  // 0 or 1: which tile of the pair
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
  cluster_sync();  // both CTAs' barriers exist before either producer multicasts (change 3)
  __syncthreads();  // (implied by the cluster barrier; spelled out for compute-sanitizer's racecheck)

  if (threadIdx.x < 128) {  // the producer warpgroup
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&mapA);
      prefetch_tensormap(&mapB);
      int it = 0;  // slices loaded so far, over all of this block's tiles
      for (int t = cluster; t < tiles; t += clusters) {
        const int2 pt = grouped_tile(t, pairRows, tilesN, GROUP);
        const int row0 = (pt.x * CLUSTER + rank) * kTmaBM, col0 = pt.y * kTmaBN;
        for (int kt = 0; kt < KT; ++kt, ++it) {
          const int s = it % STAGES;
          const uint32_t stage = ring + s * kTmaStageBytes, bar = full + 8 * s;
          // both CTAs' consumers are done with this buffer's last slice (the peer writes it too)
          if (it >= STAGES) mbar_wait(empty + 8 * s, (it / STAGES - 1) & 1);
          mbar_arrive_expect_tx(bar, tma_stage_bytes(row0, col0, M, N));  // A and every B box, both halves
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
    int it = 0;  // slices consumed so far, in step with the producer's count
    for (int t = cluster; t < tiles; t += clusters) {
      const int2 pt = grouped_tile(t, pairRows, tilesN, GROUP);
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
      store_wgmma_tile(C, acc, M, N, row0 + wg * 64, col0, vecC);
    }
  }
  // No thread has left: the peer may still arrive on this CTA's empty barriers until it is done.
  cluster_sync();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  __trap();  // sm_90 code without the sm_90a features: never run silently (see 12_wgmma.cu)
#endif  // WGMMA_AVAILABLE
}

template <typename T, int STAGES>
cudaError_t launch_persistent_t(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                cudaStream_t s) {
  constexpr int SMEM = STAGES * kTmaStageBytes + 1024 + 2 * STAGES * 8;
  constexpr auto kernel = persistent_kernel<T, STAGES>;
  CUtensorMap mapA, mapB;
  cudaError_t err = encode_tile_maps(&mapA, &mapB, M, N, K, A, B, dtype);
  if (err != cudaSuccess) return err;
  return launch_on_clusters<kernel>(M, N, SMEM, s, M, N, K, mapA, mapB, static_cast<T*>(C), pairs_aligned_b16(C, N));
}

// Persistent 2-CTA clusters of 128 x 256 x 64 blocks (one producer and two consumer
// warpgroups), 4 stages, B multicast. Compute capability 9.0 with sm_90a code only; A and B
// rows 16-byte aligned.
cudaError_t launch_persistent(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                              cudaStream_t s) {
#ifdef CUDA_REFERENCE_SM90A
  bool sm90 = false;
  cudaError_t err = current_device_is_sm90(&sm90);
  if (err != cudaSuccess) return err;
  if (sm90)
    return dtype == kBf16 ? launch_persistent_t<__nv_bfloat16, 4>(M, N, K, A, B, C, dtype, s)
                          : launch_persistent_t<__half, 4>(M, N, K, A, B, C, dtype, s);
#endif
  return cudaErrorNoKernelImageForDevice;
}
