// Step 13: TMA loads completing on mbarriers, in place of step 12's cp.async.
//
// In step 12 every one of the 256 threads computes addresses and issues 12 cp.async of 16
// bytes per 64-deep slice (3072 per block), then waits for its own copies (cp.async.wait_group)
// and fences them for the tensor cores. Hopper's tensor memory accelerator (TMA, tma.cuh)
// copies a whole 2-D box of a matrix in one instruction, issued by a single thread: the
// address arithmetic, the bounds checks with their zero fill, and the 128-byte swizzle all
// happen in the TMA unit, described once on the host by a tensor map (cuTensorMapEncodeTiled).
// Three changes:
// 1. Thread 0 loads a slice with five cp.async.bulk.tensor: A's 64 x 128 box and B's four
//    64 x 64 boxes. Their swizzle puts every element where step 12's copies put it, so the
//    wgmma descriptors are step 12's.
// 2. Completion is tracked by an mbarrier per stage ("full"): thread 0 announces the slice's
//    bytes (mbarrier.arrive.expect_tx), the TMA counts its bytes off as they land, and the
//    phase completes when all have; every thread waits for it (try_wait.parity, phase parity
//    (kt / STAGES) & 1). No cp.async.wait_group and no proxy fence: TMA writes shared memory
//    through the async proxy, which the wgmma reads too, and the barrier publishes it.
// 3. Rows must be 16-byte aligned (K and N multiples of 8, aligned pointers): TMA cannot
//    address anything else, so this step has no scalar fallback; the Python side refuses
//    other layouts with the fix (pad, or step 12). M, N and K are otherwise free: the TMA
//    zero-fills what lies past the edges, and the epilogue checks bounds as in step 12.
// Unchanged from step 12: one warpgroup per 64 rows of the 128 x 256 tile, 4 stages of 48
// KiB, slices issued STAGES - 2 ahead, one __syncthreads per slice (all warpgroups are done
// with the slice whose buffer is refilled next), the grouped block order, the stores from
// registers. The warps still both load and multiply; step 14 separates those roles. sm_90a
// only: the launcher refuses other GPUs.
#include "tma.cuh"

template <typename T, int STAGES>
__global__ void __launch_bounds__(256, 1)
    tma_kernel(int M, int N, int K, const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
               T* C, bool vecC) {
#if WGMMA_AVAILABLE
  constexpr int GROUP_M = 8, AHEAD = STAGES - 2;
  static_assert(STAGES >= 3, "the buffer being refilled is two slices behind");
  extern __shared__ uint4 tma_smem[];
  uint8_t* smem = align1024(tma_smem);  // the ring, then STAGES "full" barriers
  const uint32_t ring = smem_u32(smem), full = ring + STAGES * kTmaStageBytes;

  const int2 origin = grouped_block_origin<kTmaBM, kTmaBN, GROUP_M>(M, N);  // as in step 11
  const int rowBase = origin.x, colBase = origin.y;
  const int KT = CEIL_DIV(K, kTmaBK);

  if (threadIdx.x == 0) {
    prefetch_tensormap(&mapA);
    prefetch_tensormap(&mapB);
    for (int s = 0; s < STAGES; ++s) mbar_init(full + 8 * s, 1);  // one arrival: thread 0's expect_tx
    fence_mbarrier_init();
  }
  __syncthreads();
  // Slice kt into buffer kt % STAGES, announced on that buffer's barrier (change 1).
  auto load_slice = [&](int kt) {
    const int s = kt % STAGES;
    tma_load_stage(ring + s * kTmaStageBytes, full + 8 * s, &mapA, &mapB, rowBase, colBase, kt * kTmaBK, M, N);
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < AHEAD && s < KT; ++s) load_slice(s);

  const int wg = threadIdx.x / 128;  // this warpgroup's 64 rows of the block tile
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;

  for (int kt = 0; kt < KT; ++kt) {
    __syncthreads();  // every warpgroup has waited for slice kt-2's products (wgmma_wait<1> below)
    if (threadIdx.x == 0 && kt + AHEAD < KT) load_slice(kt + AHEAD);  // into the buffer slice kt-2 used
    const int s = kt % STAGES;
    mbar_wait(full + 8 * s, (kt / STAGES) & 1);  // slice kt has landed (change 2)
    wgmma_fence();
    wgmma_slice<T>(acc, ring + s * kTmaStageBytes, wg);
    wgmma_commit();
    wgmma_wait<1>();  // slice kt-1's products are done; kt's may still run
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < 128; ++i) fence_operand(acc[i]);
  store_wgmma_tile(C, acc, M, N, rowBase + wg * 64, colBase, vecC);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  __trap();  // sm_90 code without the sm_90a features: never run silently (see 12_wgmma.cu)
#endif  // WGMMA_AVAILABLE
}

template <typename T, int STAGES>
cudaError_t launch_tma_t(int M, int N, int K, const void* A, const void* B, void* C, int dtype, cudaStream_t s) {
  constexpr int SMEM = STAGES * kTmaStageBytes + 1024 + STAGES * 8;  // + room to align the ring, the barriers
  constexpr auto kernel = tma_kernel<T, STAGES>;
  CUtensorMap mapA, mapB;
  cudaError_t err = encode_tile_maps(&mapA, &mapB, M, N, K, A, B, dtype);
  if (err != cudaSuccess) return err;
  err = opt_in_dynamic_smem<kernel>(SMEM);
  if (err != cudaSuccess) return err;
  const long long blocks = (long long)CEIL_DIV(M, kTmaBM) * CEIL_DIV(N, kTmaBN);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<(unsigned)blocks, 256, SMEM, s>>>(M, N, K, mapA, mapB, static_cast<T*>(C), pairs_aligned_b16(C, N));
  return cudaGetLastError();
}

// 128 x 256 x 64 blocks, two warpgroups, 4 stages. Compute capability 9.0 with sm_90a code only
// (as step 12); A and B rows 16-byte aligned, else cudaErrorInvalidValue.
cudaError_t launch_tma(int M, int N, int K, const void* A, const void* B, void* C, int dtype, cudaStream_t s) {
#ifdef CUDA_REFERENCE_SM90A
  bool sm90 = false;
  cudaError_t err = current_device_is_sm90(&sm90);
  if (err != cudaSuccess) return err;
  if (sm90)
    return dtype == kBf16 ? launch_tma_t<__nv_bfloat16, 4>(M, N, K, A, B, C, dtype, s)
                          : launch_tma_t<__half, 4>(M, N, K, A, B, C, dtype, s);
#endif
  return cudaErrorNoKernelImageForDevice;
}
