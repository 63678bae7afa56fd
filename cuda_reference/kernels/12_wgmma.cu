// Step 12: Hopper's warpgroup MMA, wgmma.mma_async, reading both operands from shared memory.
//
// Step 11 feeds mma.sync, the Ampere instruction: every m16n8k16 product needs its operands
// in registers first, so the warps spend their issue slots on ldmatrix and on many small
// synchronous mma, and on an H100 that tops out near 40% of cuBLAS. Hopper's tensor cores
// take bigger, asynchronous products straight from shared memory (wgmma.cuh). Four changes:
// 1. A warpgroup (4 warps, 128 threads) issues one wgmma.mma_async.m64n256k16: a 64 x 256
//    x 16 product whose A and B the tensor cores read from shared memory through 64-bit
//    descriptors (start address, two strides, swizzle mode). No ldmatrix, no operand
//    registers: per 16-deep step one instruction where four of step 11's warps issue 32
//    ldmatrix and 128 mma.sync for the same 64 x 256. The block (128 x 256, 8 warps as in
//    step 11) is two warpgroups of 64 x 256, each thread holding 128 fp32 accumulators.
// 2. The descriptors fix the layout in shared memory: rows of 128 bytes, 16-byte chunks
//    permuted by the 128-byte swizzle instead of step 10's padding (which no descriptor can
//    express). A is stored K-major (a row of A's 64-deep slice is one 128-byte row), B as it
//    lies in memory, n contiguous, in four 64-column blocks: the "MN-major" layout, which
//    wgmma transposes on the fly for 16-bit types (imm-trans-b). The cp.async copies of
//    step 11 write each chunk straight to its swizzled place.
// 3. The products run asynchronously: wgmma.commit_group / wait_group, as cp.async has.
//    Each step issues the products of slice kt, then the copies of slice kt + STAGES - 2,
//    and waits only for slice kt - 1's products, so the tensor cores always have the next
//    slice queued. A buffer is refilled two steps after its products were issued, so one
//    __syncthreads() per step still covers every hazard (4 stages of 48 KiB: 193 KiB).
// 4. Copies write shared memory through the generic proxy and wgmma reads it through the
//    async proxy: each thread fences its landed copies (fence.proxy.async) before the
//    barrier that hands them to the tensor cores.
// Unaligned rows (K or N not a multiple of 8) fall back to load8 as in step 11; the grouped
// block order and the bounds-checked stores from registers are step 11's. sm_90a only: the
// launcher refuses other GPUs, and builds without sm_90a (build.py compiles 9.0 as 9.0a).
#include "wgmma.cuh"

template <typename T, int STAGES>
__global__ void __launch_bounds__(256, 1)
    wgmma_kernel(int M, int N, int K, const uint16_t* A, const uint16_t* B, T* C, bool vecA, bool vecB, bool vecC) {
#if WGMMA_AVAILABLE
  constexpr int BM = 128, BN = 256, BK = 64, THREADS = 256, GROUP_M = 8, AHEAD = STAGES - 2;
  constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BK * BN * 2;  // 16 + 32 KiB
  constexpr int A_LOADS = BM * BK / 8 / THREADS, B_LOADS = BK * BN / 8 / THREADS;
  static_assert(BK * 2 == 128, "one 128-byte swizzle row per row of A's slice");
  static_assert(STAGES >= 3, "the buffer being refilled is two slices behind");
  extern __shared__ uint4 wgmma_smem[];
  // The swizzle works on absolute addresses: start the ring on a 1024-byte boundary.
  uint8_t* smem = reinterpret_cast<uint8_t*>(wgmma_smem) + ((1024 - smem_u32(wgmma_smem) % 1024) % 1024);

  const int2 origin = grouped_block_origin<BM, BN, GROUP_M>(M, N);  // as in step 11
  const int rowBase = origin.x, colBase = origin.y;

  // Copies slice kt into buffer `stage`, each 16-byte chunk to its swizzled place.
  auto load_slice = [&](int stage, int kt) {
    uint8_t* as = smem + stage * STAGE_BYTES;
    uint8_t* bs = as + A_BYTES;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < A_LOADS; ++i) {  // A: row r, chunk c (k0 + 8c ..) of the 128 x 64 slice
      const int idx = threadIdx.x + i * THREADS, r = idx / 8, c = idx % 8;
      const int row = rowBase + r, col = k0 + c * 8;
      uint8_t* dst = as + swizzle128(r, c);
      if (vecA) {
        const bool in = row < M && col < K;
        cp_async16(dst, in ? A + (size_t)row * K + col : A, in ? 16 : 0);
      } else {
        *reinterpret_cast<uint4*>(dst) = load8(A, row, col, M, K, K, false);
      }
    }
#pragma unroll
    for (int i = 0; i < B_LOADS; ++i) {  // B: row r (k), chunk c (n = 8c ..) of the 64 x 256 slice
      const int idx = threadIdx.x + i * THREADS, r = idx / 32, c = idx % 32;
      const int row = k0 + r, col = colBase + c * 8;
      uint8_t* dst = bs + (c / 8) * (BK * 128) + swizzle128(r, c % 8);  // column block c / 8
      if (vecB) {
        const bool in = row < K && col < N;
        cp_async16(dst, in ? B + (size_t)row * N + col : B, in ? 16 : 0);
      } else {
        *reinterpret_cast<uint4*>(dst) = load8(B, row, col, K, N, N, false);
      }
    }
  };

  const int wg = threadIdx.x / 128;  // this warpgroup's 64 rows of the block tile
  float acc[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) acc[i] = 0.f;

  const int KT = CEIL_DIV(K, BK);
#pragma unroll
  for (int s = 0; s < AHEAD; ++s) {  // one commit group per slice, empty past the end
    if (s < KT) load_slice(s, s);
    cp_async_commit();
  }
  const uint32_t ring = smem_u32(smem);
  for (int kt = 0; kt < KT; ++kt) {
    cp_async_wait<AHEAD - 1>();  // this thread's copies of slice kt have landed
    fence_proxy_async();         // ... and are visible to the tensor cores' reads (change 4)
    __syncthreads();             // everyone's are; every warpgroup is done with slice kt-2
    const uint32_t a_slice = ring + (kt % STAGES) * STAGE_BYTES, b_slice = a_slice + A_BYTES;
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < BK / 16; ++s)  // k16 step s: A 32 bytes along its rows, B 16 rows down
      wgmma_m64n256k16<T>(acc, wgmma_desc(a_slice + wg * 64 * 128 + s * 32, 16, 1024),
                          wgmma_desc(b_slice + s * 16 * 128, BK * 128, 1024));
    wgmma_commit();
    const int next = kt + AHEAD;  // into the buffer slice kt-2 used
    if (next < KT) load_slice(next % STAGES, next);
    cp_async_commit();
    wgmma_wait<1>();  // slice kt-1's products are done; kt's may still run
  }
  wgmma_wait<0>();
  cp_async_wait<0>();
#pragma unroll
  for (int i = 0; i < 128; ++i) fence_operand(acc[i]);

  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int row = rowBase + wg * 64 + (threadIdx.x / 32 % 4) * 16 + g;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = colBase + j * 8 + 2 * t;
    store2(C, acc[4 * j], acc[4 * j + 1], row, col, M, N, vecC);
    store2(C, acc[4 * j + 2], acc[4 * j + 3], row + 8, col, M, N, vecC);
  }
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
  // sm_90 code without wgmma: only reached if a compiler stopped defining the sm_90a feature
  // macro (wgmma.cuh), or if a 9.0 GPU ran the plain compute_90 PTX of a "9.0+PTX" build
  // instead of its sm_90a cubin. Fail loudly rather than leave C uninitialised. The launcher
  // starts this kernel on 9.0 GPUs only, so other arches' (empty) bodies never run.
  __trap();
#endif  // WGMMA_AVAILABLE
}

template <typename T, int STAGES>
cudaError_t launch_wgmma_t(int M, int N, int K, const void* A, const void* B, void* C, cudaStream_t s) {
  constexpr int SMEM = STAGES * (128 * 64 + 64 * 256) * 2 + 1024;  // + room to align the ring
  constexpr auto kernel = wgmma_kernel<T, STAGES>;
  cudaError_t err = opt_in_dynamic_smem<kernel>(SMEM);  // as in step 11
  if (err != cudaSuccess) return err;
  const long long blocks = (long long)CEIL_DIV(M, 128) * CEIL_DIV(N, 256);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  kernel<<<(unsigned)blocks, 256, SMEM, s>>>(
      M, N, K, static_cast<const uint16_t*>(A), static_cast<const uint16_t*>(B), static_cast<T*>(C),
      rows_aligned16_b16(A, K), rows_aligned16_b16(B, N), pairs_aligned_b16(C, N));
  return cudaGetLastError();
}

// 128 x 256 x 64 blocks, two warpgroups of 64 x 256, 4 stages. Compute capability 9.0 only,
// and only when build.py compiled sm_90a code (CUDA_REFERENCE_SM90A); elsewhere "no kernel
// image is available" rather than a kernel that silently does nothing.
cudaError_t launch_wgmma(int M, int N, int K, const void* A, const void* B, void* C, int dtype, cudaStream_t s) {
#ifdef CUDA_REFERENCE_SM90A
  int dev = 0, major = 0, minor = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (err != cudaSuccess) return err;
  if (major == 9 && minor == 0)
    return dtype == kBf16 ? launch_wgmma_t<__nv_bfloat16, 4>(M, N, K, A, B, C, s)
                          : launch_wgmma_t<__half, 4>(M, N, K, A, B, C, s);
#endif
  return cudaErrorNoKernelImageForDevice;
}
