// Hopper's warpgroup MMA (step 12): shared-memory matrix descriptors, the 128-byte swizzle
// they describe, and wgmma.mma_async with its fences. PTX ISA, "Asynchronous Warpgroup
// Level Matrix Multiply-Accumulate Instructions".
//
// Only code compiled for sm_90a may use wgmma: WGMMA_AVAILABLE is 1 in that device pass
// and 0 everywhere else (host pass, other arches). There the kernel bodies compile empty,
// except in sm_90 code without the feature, where they trap (12_wgmma.cu): a 9.0 GPU must
// never run a kernel that silently does nothing.
//
// The 128-byte swizzle. A tile is stored as rows of 128 bytes (eight 16-byte chunks); the
// hardware reads chunk c of row r at chunk position c ^ (r % 8), i.e. it XORs address bits
// 4-6 with bits 7-9. That is a function of the absolute shared address, so tiles start on
// 1024-byte boundaries (8 rows), and the eight chunks of any 8-row column land in eight
// different bank groups: conflict-free for both the copies in and the tensor core's reads.
//   A, K-major (k along the 128-byte row, 64 elements): row m at m * 128. One m64 x k16
//     wgmma operand is 64 rows x 32 bytes: 8-row groups SBO = 1024 bytes apart; the leading
//     offset is unused (the 16 k lie inside one row). The k16 step s of a 64-deep slice
//     starts 32 * s bytes into the row: the descriptor's start moves, the swizzle does not.
//   B, MN-major (n along the row: B is row-major K x N, so this is the transposed layout,
//     imm-trans-b = 1): a BK x 256 slice is four column blocks of 64 n, each BK rows of
//     128 bytes. One k16 x n256 operand: 8-row (k) groups SBO = 1024 bytes apart, the 64-n
//     blocks LBO = BK * 128 bytes apart (CUTLASS's canonical GMMA layouts, cute
//     mma_sm90_desc.hpp: MN-major SW128 is ((8,n),(8,k)):((1,LBO),(8,SBO)) in 16-byte units).
#pragma once
#include "mma.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define WGMMA_AVAILABLE 1
#else
#define WGMMA_AVAILABLE 0
#endif

// Byte offset of 16-byte chunk `chunk` (0-7) of 128-byte row `row` in a 128B-swizzled tile.
__host__ __device__ __forceinline__ int swizzle128(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// The 64-bit shared-memory matrix descriptor: start address, leading and stride byte
// offsets (all >> 4, 14 bits each, at bits 0, 16 and 32), base offset 0 (tiles are
// 1024-byte aligned), swizzle mode 1 = 128 bytes at bits 62-63.
__device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo) {
  return uint64_t((smem_addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
         (uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (uint64_t(1) << 62);
}

#if WGMMA_AVAILABLE
// Orders this thread's earlier register accesses before the warpgroup's next wgmma.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the group of wgmma.mma_async this warpgroup issued since the last commit.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N of this warpgroup's committed wgmma groups are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// wgmma reads shared memory through the async proxy; what this thread wrote through the
// generic one (cp.async, st.shared) must be fenced before a barrier hands it over.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Tells the compiler `r` may change here, so it reads the accumulators only after a wait.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// d (64 x 256 fp32 over the warpgroup, 128 a thread) += A (64 x 16, K-major) * B (16 x 256,
// MN-major), both from shared memory. d[4j + e] of lane 4g + t in warp w of the warpgroup
// is row 16w + g + 8 * (e / 2), column 8j + 2t + e % 2 (the m16n8 C layout of mma.cuh,
// repeated 32 times along n). scale-d = 1: accumulate; scale-a, scale-b = 1; trans-a = 0,
// trans-b = 1.
#define WGMMA_M64N256K16(TYPE)                                                                                   \
  asm volatile(                                                                                                  \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                              \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                                         \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                   \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                         \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                         \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                         \
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                         \
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                         \
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "              \
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "        \
      "%128, %129, p, 1, 1, 0, 1;\n}\n"                                                                          \
      : WGMMA_D8(0), WGMMA_D8(8), WGMMA_D8(16), WGMMA_D8(24), WGMMA_D8(32), WGMMA_D8(40), WGMMA_D8(48),         \
        WGMMA_D8(56), WGMMA_D8(64), WGMMA_D8(72), WGMMA_D8(80), WGMMA_D8(88), WGMMA_D8(96), WGMMA_D8(104),      \
        WGMMA_D8(112), WGMMA_D8(120)                                                                             \
      : "l"(desc_a), "l"(desc_b), "r"(1))
#define WGMMA_D8(i)                                                                                  \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])

template <typename T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b);
template <>
__device__ __forceinline__ void wgmma_m64n256k16<__half>(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  WGMMA_M64N256K16("f16");
}
template <>
__device__ __forceinline__ void wgmma_m64n256k16<__nv_bfloat16>(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  WGMMA_M64N256K16("bf16");
}
#undef WGMMA_M64N256K16
#undef WGMMA_D8
#endif  // WGMMA_AVAILABLE
