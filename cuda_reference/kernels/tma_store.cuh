// The TMA store and its bookkeeping, for step 16's epilogue: registers -> shared memory ->
// cp.async.bulk.tensor to global memory. PTX ISA, "cp.async.bulk.tensor" (the .global.shared::cta
// direction), "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "barrier".
//
// A TMA store copies a box of shared memory to the box of a tensor map at (col, row), through
// the async proxy, and drops every element that lies outside the matrix: a partial tile needs
// no bounds checks in the kernel. The box here is 64 columns x 64 rows of C (8 KiB), written
// to shared memory with the 128-byte swizzle of the loads (wgmma.cuh): element (r, c) of the
// box at r * 128 + ((c / 8) ^ (r % 8)) * 16 + (c % 8) * 2 from a 1024-byte aligned base; the
// map for C is encoded with CU_TENSOR_MAP_SWIZZLE_128B, so the TMA reads it back that way.
//
// Ordering, both directions (the CUTLASS sm90 epilogue's):
//  - threads -> TMA: every thread that wrote the box fences its generic-proxy writes for the
//    async proxy (fence.proxy.async.shared::cta), then a barrier, then one thread issues the
//    store and closes it into a bulk async-group (commit_group);
//  - TMA -> threads: before the box is written again, the issuing thread waits until the
//    store has finished *reading* it (cp.async.bulk.wait_group.read N: at most the N most
//    recent groups may still be reading), then a barrier lets the others write.
// Bulk async-groups belong to the issuing thread; every commit closes one group, empty when
// no store was issued since the last one, so "the N most recent groups" counts commits.
// Before the CTA exits, the issuing thread waits for its stores to complete (wait_group 0).
#pragma once
#include "tma.cuh"

constexpr int kTmaCBoxBytes = 64 * 64 * 2;  // one 64 x 64 box of C: 8 KiB, 64 rows of 128 bytes

#if WGMMA_AVAILABLE
// Copies the 64 x 64 box at shared address `src` to (col, row) of `map`; outside the matrix,
// nothing is written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(col), "r"(row), "r"(src)
               : "memory");
}
// Closes this thread's bulk stores issued since the last commit into one bulk async-group.
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's bulk async-groups are still reading their source.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's bulk async-groups are incomplete (writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// The named barrier of consumer warpgroup `wg` (0 or 1): its 128 threads, barrier id 1 + wg
// (0 is __syncthreads). The id is an immediate, so ptxas reserves three barriers, not all 16.
// barrier.sync, not bar.sync (= barrier.sync.aligned): the threads arrive from a branch that
// only one of them took (the issuing thread's wait), so no warp-uniformity is promised.
__device__ __forceinline__ void warpgroup_barrier(int wg) {
  if (wg == 0)
    asm volatile("barrier.sync 1, 128;\n" ::: "memory");
  else
    asm volatile("barrier.sync 2, 128;\n" ::: "memory");
}
// One 32-bit store to shared memory at a shared-window address.
__device__ __forceinline__ void st_shared_b32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
#endif  // WGMMA_AVAILABLE
