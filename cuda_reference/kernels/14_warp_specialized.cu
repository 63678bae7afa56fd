// Step 14: warp specialization. A producer warpgroup only loads, two consumer warpgroups only
// multiply, and they hand the ring's buffers to each other through mbarriers.
//
// In step 13 the same warps load and multiply, so once per slice all of them meet at a
// __syncthreads (the buffer about to be refilled must be free in every warpgroup), and the
// slowest warpgroup sets everyone's pace; the loads also run only STAGES - 2 slices ahead,
// because the refill rule has to hold with one barrier per slice. Three changes:
// 1. Roles. The block has 384 threads: warpgroup 0 is the producer, of which one thread
//    issues the TMA loads; warpgroups 1 and 2 are consumers, each owning 64 rows of the 128 x
//    256 tile with 128 fp32 accumulators a thread, as in steps 12 and 13. No __syncthreads
//    after the start: each side runs at its own pace, as far as the ring allows.
// 2. Two mbarriers per stage. "full" as in step 13 (the producer's expect_tx, then the TMA's
//    bytes); "empty" counts the consumers' releases: after wgmma_wait<1> of slice kt a
//    consumer warp's products of slice kt-1 are complete, and its lane 0 arrives on the empty
//    barrier of kt-1's buffer (8 arrivals, one per consumer warp, complete a phase). The
//    producer waits for that before refilling the buffer, so it can now run all STAGES slices
//    ahead: the (kt / STAGES)-th refill of buffer kt % STAGES waits for parity (kt / STAGES -
//    1) & 1 of its empty barrier (tma.cuh).
// 3. Registers. 384 threads under __launch_bounds__(384, 1) get 168 registers each (the
//    65536-register file / 384, rounded down to 8). The producer needs few, the consumers'
//    accumulators alone take 128: setmaxnreg (sm_90a) moves them, the producer warpgroup
//    going down to 40 and the consumers up to 232 (128 x 40 + 256 x 232 = 64512 <= 65536).
// The tile, the layouts, the descriptors, the 4 stages, the grouped block order and the
// stores from registers are step 13's. sm_90a only: the launcher refuses other GPUs.
#include "tma.cuh"

template <typename T, int STAGES>
__global__ void __launch_bounds__(384, 1)
    warp_specialized_kernel(int M, int N, int K, const __grid_constant__ CUtensorMap mapA,
                            const __grid_constant__ CUtensorMap mapB, T* C, bool vecC) {
#if WGMMA_AVAILABLE
  constexpr int GROUP_M = 8, CONSUMER_WARPS = 8;
  extern __shared__ uint4 ws_smem[];
  uint8_t* smem = align1024(ws_smem);  // the ring, then STAGES full and STAGES empty barriers
  const uint32_t ring = smem_u32(smem), full = ring + STAGES * kTmaStageBytes, empty = full + 8 * STAGES;

  const int2 origin = grouped_block_origin<kTmaBM, kTmaBN, GROUP_M>(M, N);
  const int rowBase = origin.x, colBase = origin.y;
  const int KT = CEIL_DIV(K, kTmaBK);

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full + 8 * s, 1);                // the producer's expect_tx
      mbar_init(empty + 8 * s, CONSUMER_WARPS);  // one release per consumer warp
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: from here on, only the mbarriers

  if (threadIdx.x < 128) {  // the producer warpgroup (change 1)
    setmaxnreg_dec<40>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&mapA);
      prefetch_tensormap(&mapB);
      for (int kt = 0; kt < KT; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty + 8 * s, (kt / STAGES - 1) & 1);  // its last slice's products are done
        tma_load_stage(ring + s * kTmaStageBytes, full + 8 * s, &mapA, &mapB, rowBase, colBase, kt * kTmaBK, M, N);
      }
    }
    return;  // the other producer threads have nothing to do (nor a barrier to keep)
  }

  setmaxnreg_inc<232>();  // a consumer warpgroup (change 3)
  const int wg = threadIdx.x / 128 - 1;  // its 64 rows of the block tile
  const bool releaser = threadIdx.x % 32 == 0;
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;

  for (int kt = 0; kt < KT; ++kt) {
    const int s = kt % STAGES;
    mbar_wait(full + 8 * s, (kt / STAGES) & 1);  // slice kt has landed
    wgmma_fence();
    wgmma_slice<T>(acc, ring + s * kTmaStageBytes, wg);
    wgmma_commit();
    wgmma_wait<1>();  // this warp's products of slice kt-1 are done (change 2) ...
    if (kt > 0) mbar_arrive_if(empty + 8 * ((kt - 1) % STAGES), releaser);  // ... so its buffer may be refilled
  }
  wgmma_wait<0>();  // (the last slice's buffer is not refilled: no release needed)
#pragma unroll
  for (int i = 0; i < 128; ++i) fence_operand(acc[i]);
  store_wgmma_tile(C, acc, M, N, rowBase + wg * 64, colBase, vecC);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  __trap();  // sm_90 code without the sm_90a features: never run silently (see 12_wgmma.cu)
#endif  // WGMMA_AVAILABLE
}

template <typename T, int STAGES>
cudaError_t launch_warp_specialized_t(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                      cudaStream_t s) {
  constexpr int SMEM = STAGES * kTmaStageBytes + 1024 + 2 * STAGES * 8;
  constexpr auto kernel = warp_specialized_kernel<T, STAGES>;
  CUtensorMap mapA, mapB;
  cudaError_t err = encode_tile_maps(&mapA, &mapB, M, N, K, A, B, dtype);
  if (err != cudaSuccess) return err;
  err = opt_in_dynamic_smem<kernel>(SMEM);
  if (err != cudaSuccess) return err;
  const long long blocks = (long long)CEIL_DIV(M, kTmaBM) * CEIL_DIV(N, kTmaBN);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<(unsigned)blocks, 384, SMEM, s>>>(M, N, K, mapA, mapB, static_cast<T*>(C), pairs_aligned_b16(C, N));
  return cudaGetLastError();
}

// 128 x 256 x 64 blocks of one producer and two consumer warpgroups, 4 stages. Compute
// capability 9.0 with sm_90a code only; A and B rows 16-byte aligned.
cudaError_t launch_warp_specialized(int M, int N, int K, const void* A, const void* B, void* C, int dtype,
                                    cudaStream_t s) {
#ifdef CUDA_REFERENCE_SM90A
  bool sm90 = false;
  cudaError_t err = current_device_is_sm90(&sm90);
  if (err != cudaSuccess) return err;
  if (sm90)
    return dtype == kBf16 ? launch_warp_specialized_t<__nv_bfloat16, 4>(M, N, K, A, B, C, dtype, s)
                          : launch_warp_specialized_t<__half, 4>(M, N, K, A, B, C, dtype, s);
#endif
  return cudaErrorNoKernelImageForDevice;
}
