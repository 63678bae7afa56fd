// Hopper's tensor memory accelerator (TMA) and the mbarriers it completes on, for steps 13 to
// 15: the host-side tensor maps, the PTX of the loads, the barriers, warpgroup register
// reallocation and the cluster primitives. PTX ISA, "Tensor Copy" (cp.async.bulk.tensor),
// "mbarrier", "setmaxnreg", "Cluster of Cooperative Thread Arrays"; CUDA driver API
// cuTensorMapEncodeTiled.
//
// A tensor map (CUtensorMap, 128 bytes, built on the host and passed as a __grid_constant__
// kernel parameter) describes a row-major matrix: base address, sizes, row pitch, the box one
// load copies, and the swizzle the copy applies on its way into shared memory. One thread
// issues cp.async.bulk.tensor with the box's coordinates (column, row); the TMA unit copies the
// whole box, fills what lies outside the matrix with zeros, and counts the box's bytes (all of
// them, zeros included) against an mbarrier. TMA needs the base address and the row pitch to
// be multiples of 16 bytes: for 16-bit data, K and N multiples of 8 and 16-byte aligned
// pointers (the Python side refuses anything else, cuda_reference._check).
//
// The tile (all three steps): 128 x 256 of C per block, slices 64 deep, as in step 12, in the
// layout of step 12 (wgmma.cuh), which is the TMA's own 128-byte swizzle: a box whose row is
// 128 bytes (64 elements) lands as rows of 128 bytes, 16-byte chunk c of row r at chunk
// position c ^ (r % 8), relative to a 1024-byte-aligned destination. So
//   A: one box of 64 k x 128 rows (16 KiB): row m at m * 128, K-major; the same descriptors.
//   B: four boxes of 64 n x 64 k (8 KiB each), box j = columns 64j..64j+63, at j * 8 KiB: the
//      MN-major column blocks of step 12 (LBO = 64 * 128 bytes).
// A box wholly outside the matrix is not issued (and its bytes not expected): its stage keeps
// stale data, which can only reach rows or columns of C that the epilogue drops. Boxes that
// are partly outside are issued, and the TMA zero-fills the rest; in particular the last,
// partial K slice is zero in both A and B, so it adds nothing.
//
// mbarrier (a 64-bit object in shared memory): initialised with an arrival count; a phase
// completes when that many arrivals have come and the pending transaction bytes (raised by
// expect_tx, lowered by the TMA's complete_tx) are back at zero, and the barrier moves on to
// the next phase. A waiter names the parity of the phase it waits for: try_wait.parity(P)
// succeeds once the phase with parity P has completed, i.e. while the current phase's parity
// is not P. A ring of STAGES buffers fills buffer it % STAGES for the it-th slice, its
// (it / STAGES)-th use, so a consumer waits for parity (it / STAGES) & 1; a producer refilling
// the buffer for use u >= 1 waits for the (u - 1)-th release, parity (u - 1) & 1.
#pragma once
#include <cuda.h>  // CUtensorMap and its enums only: the driver is reached through the runtime
#include <cstdlib>
#include "wgmma.cuh"

// The block tile of steps 13 to 15 and what one stage of the ring holds.
constexpr int kTmaBM = 128, kTmaBN = 256, kTmaBK = 64;
constexpr int kTmaABytes = kTmaBM * kTmaBK * 2;          // A's box: 16 KiB
constexpr int kTmaBBoxBytes = kTmaBK * 64 * 2;           // one of B's four boxes: 8 KiB = BK * 128
constexpr int kTmaStageBytes = kTmaABytes + 4 * kTmaBBoxBytes;  // 48 KiB
static_assert(kTmaBK * 2 == 128 && kTmaBBoxBytes == kTmaBK * 128, "step 12's layout: rows of 128 bytes");

// ---- host ---------------------------------------------------------------------------------

// Encodes the tensor map of a row-major rows x cols 16-bit matrix (row pitch cols * 2 bytes)
// whose loads copy box_cols x box_rows boxes with the 128-byte swizzle. cuTensorMapEncodeTiled
// is a driver function: its address comes from the runtime (cudaGetDriverEntryPoint), so the
// extension needs no -lcuda. Out-of-bounds elements read as zero (OOB_FILL_NONE).
inline cudaError_t encode_tma_2d(CUtensorMap* map, const void* base, int dtype, int rows, int cols, int box_rows,
                                 int box_cols) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static const Encode encode = []() -> Encode {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found);
#else
    cudaError_t err = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
    return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? reinterpret_cast<Encode>(fn) : nullptr;
  }();
  if (encode == nullptr) return cudaErrorNotSupported;
  if (reinterpret_cast<size_t>(base) % 16 != 0 || cols % 8 != 0) return cudaErrorInvalidValue;
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost (contiguous) first
  const cuuint64_t pitch[1] = {cuuint64_t(cols) * 2};               // bytes between rows
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  CUresult r = encode(map, dtype == kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
                      const_cast<void*>(base), dims, pitch, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// The two tensor maps of the block tile: A (M x K) in 64 x 128 boxes, B (K x N) in 64 x 64.
inline cudaError_t encode_tile_maps(CUtensorMap* mapA, CUtensorMap* mapB, int M, int N, int K, const void* A,
                                    const void* B, int dtype) {
  cudaError_t err = encode_tma_2d(mapA, A, dtype, M, K, kTmaBM, kTmaBK);
  return err != cudaSuccess ? err : encode_tma_2d(mapB, B, dtype, K, N, kTmaBK, 64);
}

// Whether the current device is compute capability 9.0 (the sm_90a code runs there only).
inline cudaError_t current_device_is_sm90(bool* yes) {
  int dev = 0, major = 0, minor = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  *yes = err == cudaSuccess && major == 9 && minor == 0;
  return err;
}

// Launches a persistent kernel of steps 15 and 16 (384 threads a CTA, smem bytes of dynamic shared memory)
// on 2x1 clusters: as many clusters as fit on the device at once, asked once per device and kernel (it
// depends only on the two; the SM count halved if the occupancy query is unavailable), fewer under
// CUDA_REFERENCE_MAX_CLUSTERS (tests: longer walks), and never more than the M x N product's pair tiles.
template <auto kernel, typename... Args>
cudaError_t launch_on_clusters(int M, int N, int smem, cudaStream_t s, Args... args) {
  cudaError_t err = opt_in_dynamic_smem<kernel>(smem);
  if (err != cudaSuccess) return err;

  cudaLaunchAttribute cluster;
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 2, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.blockDim = dim3(384, 1, 1);
  config.dynamicSmemBytes = smem;
  config.stream = s;
  config.attrs = &cluster;
  config.numAttrs = 1;

  static std::atomic<int> fits[64];
  int dev = 0;
  err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  int clusters = dev < 64 ? fits[dev].load() : 0;
  if (clusters <= 0) {
    config.gridDim = dim3(2, 1, 1);
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters <= 0) {
      (void)cudaGetLastError();  // clear a failed query's error
      int sms = 0;
      err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
      if (err != cudaSuccess) return err;
      clusters = sms / 2 > 0 ? sms / 2 : 1;
    }
    if (dev < 64) fits[dev].store(clusters);
  }
  if (const char* cap = std::getenv("CUDA_REFERENCE_MAX_CLUSTERS")) {
    const int n = std::atoi(cap);
    if (n > 0 && n < clusters) clusters = n;
  }
  const long long pairs = (long long)CEIL_DIV(CEIL_DIV(M, kTmaBM), 2) * CEIL_DIV(N, kTmaBN);
  if (pairs > 0x7fffffffLL) return cudaErrorInvalidConfiguration;
  if (pairs < clusters) clusters = (int)pairs;
  config.gridDim = dim3(2 * clusters, 1, 1);
  return cudaLaunchKernelEx(&config, kernel, args...);
}

// ---- device -------------------------------------------------------------------------------

// Rounds the dynamic shared memory up to the 1024-byte boundary the swizzle works from.
__device__ __forceinline__ uint8_t* align1024(void* p) {
  return reinterpret_cast<uint8_t*>(p) + ((1024 - smem_u32(p) % 1024) % 1024);
}

#if WGMMA_AVAILABLE
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the other threads and to the TMA unit (the
// barrier that follows, __syncthreads or the cluster's, hands them over).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  fence_proxy_async();
}
// One arrival that also announces `bytes` more transaction bytes for the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// One arrival on a barrier of this CTA, from the threads where `pred` holds. The predicate
// stays inside the instruction: no divergent branch between a warpgroup's aligned wgmma ops.
__device__ __forceinline__ void mbar_arrive_if(uint32_t bar, bool pred) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar),
               "r"((int)pred)
               : "memory");
}
// One arrival on the barrier at the same shared-memory offset in CTA `cta` of the cluster
// (this CTA's own included), from the threads where `pred` holds: mapa turns the offset into
// that CTA's address in the cluster's shared-memory window.
__device__ __forceinline__ void mbar_arrive_cluster_if(uint32_t bar, uint32_t cta, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 remote;\nsetp.ne.b32 p, %2, 0;\n@p mapa.shared::cluster.u32 remote, %0, %1;\n"
      "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta), "r"((int)pred)
      : "memory");
}
// Spins until the phase of parity `parity` has completed (acquire, CTA scope: what the
// completing arrivals and transactions published is visible after it).
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.b32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
}

// Fetches a tensor map (a kernel parameter) into the TMA unit's cache ahead of the first load.
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// Copies the box at (col, row) of `map` to shared memory at `dst`; completes on `bar`.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int col, int row, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
          "r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(bar)
      : "memory");
}
// The same box to the same shared-memory offset `dst` in every CTA of the cluster named in
// `mask` (bit i: rank i), each copy completing on the barrier at offset `bar` of its CTA.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int col, int row,
                                                      uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(col), "r"(row), "r"(bar), "h"(mask)
      : "memory");
}

// The bytes one stage receives for the block tile at (row0, col0): A's box unless it lies
// wholly below the matrix, and each of B's four boxes that starts left of column N.
__device__ __forceinline__ uint32_t tma_stage_bytes(int row0, int col0, int M, int N) {
  uint32_t bytes = row0 < M ? kTmaABytes : 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) bytes += col0 + 64 * j < N ? kTmaBBoxBytes : 0;
  return bytes;
}
// Slice k0 of the block tile at (row0, col0) into the stage at shared address `stage`, all
// from this thread, announced on `bar` first (steps 13 and 14; step 15 multicasts B).
__device__ __forceinline__ void tma_load_stage(uint32_t stage, uint32_t bar, const CUtensorMap* mapA,
                                               const CUtensorMap* mapB, int row0, int col0, int k0, int M, int N) {
  mbar_arrive_expect_tx(bar, tma_stage_bytes(row0, col0, M, N));
  if (row0 < M) tma_load_2d(stage, mapA, k0, row0, bar);
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (col0 + 64 * j < N) tma_load_2d(stage + kTmaABytes + j * kTmaBBoxBytes, mapB, col0 + 64 * j, k0, bar);
}

// The k16 products of one 64-deep slice for warpgroup `wg` (its 64 rows of the tile): step 12's
// descriptors, unchanged, since the TMA wrote step 12's layout.
template <typename T>
__device__ __forceinline__ void wgmma_slice(float (&acc)[128], uint32_t stage, int wg) {
  const uint32_t a = stage + wg * 64 * 128, b = stage + kTmaABytes;
#pragma unroll
  for (int s = 0; s < kTmaBK / 16; ++s)
    wgmma_m64n256k16<T>(acc, wgmma_desc(a + s * 32, 16, 1024), wgmma_desc(b + s * 16 * 128, kTmaBK * 128, 1024));
}

// Stores warpgroup `wg`'s 64 x 256 accumulators (the layout of wgmma_m64n256k16) to the tile
// at (row0, col0), rounded to T, dropping what lies outside M x N (step 12's epilogue).
template <typename T>
__device__ __forceinline__ void store_wgmma_tile(T* C, const float (&acc)[128], int M, int N, int row0, int col0,
                                                 bool vecC) {
  const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int row = row0 + (threadIdx.x / 32 % 4) * 16 + g;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int col = col0 + j * 8 + 2 * t;
    store2(C, acc[4 * j], acc[4 * j + 1], row, col, M, N, vecC);
    store2(C, acc[4 * j + 2], acc[4 * j + 3], row + 8, col, M, N, vecC);
  }
}

// Warpgroup register reallocation (sm_90a): every warp of the warpgroup executes it; `dec`
// returns registers above N to the CTA's pool, `inc` waits until the pool can grant N.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// Every thread of every CTA of the cluster arrives, then waits for all the others (release /
// acquire: what each wrote to shared memory before is visible to all after).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_count_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
  return r;
}
#endif  // WGMMA_AVAILABLE
