// The tensor-core pieces shared by steps 10 to 12: the three PTX instructions steps 10 and
// 11 are built on (ldmatrix, mma.sync, cp.async; step 12 keeps cp.async), a warp tile of
// m16n8k16 products, and the block-level pieces of the pipelined steps 11 and 12: the
// grouped block order and the opt-in to more than 48 KiB of dynamic shared memory.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point
// type"); lane = 4 * g + t, g = lane / 4 the "group", t = lane % 4 its thread in the group:
//   A, 16 x 16 row-major, four 32-bit registers of two elements each:
//     a[0] = A[g][2t..2t+1]   a[1] = A[g+8][2t..2t+1]   a[2] = A[g][2t+8..]   a[3] = A[g+8][2t+8..]
//   B, 16 x 8 ("col": each register holds two consecutive k of one column n), two registers:
//     b[0] = B[2t..2t+1][g]   b[1] = B[2t+8..2t+9][g]
//   C, 16 x 8 fp32, four registers:
//     c[0], c[1] = C[g][2t], C[g][2t+1]      c[2], c[3] = C[g+8][2t], C[g+8][2t+1]
// ldmatrix.x4 loads four 8 x 8 matrices of 16-bit elements from shared memory: lanes
// 8m..8m+7 give the addresses of the 8 rows (16 bytes each) of matrix m, and register m of
// every lane receives row g, elements 2t and 2t+1 of matrix m, which is exactly the layout
// above. Pointing lanes 0-15 at rows 0-15, column 0 of a 16 x 16 tile and lanes 16-31 at
// rows 0-15, column 8 yields the four A registers in order. With .trans each matrix arrives
// transposed (lane gets elements [2t][g] and [2t+1][g]), so the same address pattern over a
// row-major [k][n] tile of B gives b[0], b[1] of the n-columns 0-7 and b[0], b[1] of the
// n-columns 8-15: two B fragments per instruction.
#pragma once

#include "fp16.cuh"

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

// d += a * b for one 16 x 8 x 16 product, fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                         const uint32_t (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
               "{%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Asynchronous 16-byte copy global -> shared that bypasses registers (and L1: .cg). With
// src_bytes = 0 nothing is read and the 16 bytes of shared memory are zero-filled: that is
// how tiles hanging over the matrix edge get their zeros. src must be a valid address even
// then (callers pass the matrix base).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
// Closes the group of cp.asyncs this thread issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Grouped block order (as in Triton's matmul tutorial): the blocks of a 1D grid are numbered
// GROUP_M block-rows at a time, down each column of blocks, so that consecutive blocks share
// B's column tiles and a few of A's row tiles, and the blocks running at once reuse each
// other's data in L2. Returns the first row and column of C that this block owns.
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ int2 grouped_block_origin(int M, int N) {
  const int tilesM = CEIL_DIV(M, BM), tilesN = CEIL_DIV(N, BN);
  const int perGroup = GROUP_M * tilesN, firstM = (blockIdx.x / perGroup) * GROUP_M;
  const int groupRows = min(tilesM - firstM, GROUP_M), inGroup = blockIdx.x % perGroup;
  return make_int2((firstM + inGroup % groupRows) * BM, (inGroup / groupRows) * BN);
}

// One warp's WM x WN tile of C as MI x NI m16n8 accumulator tiles.
template <typename T, int WM, int WN>
struct MmaWarpTile {
  static constexpr int MI = WM / 16, NI = WN / 8;
  static_assert(MI * 16 == WM && NI * 8 == WN && NI % 2 == 0, "WM a multiple of 16, WN of 16");
  float acc[MI][NI][4];

  __device__ void zero() {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;
  }

  // acc += As * Bs over one BK-deep slice in shared memory. As: the warp's WM rows of A, row
  // length lda elements (k along a row); Bs: the slice's BK rows of B starting at the
  // warp's first column, row length ldb (n along a row). Both rows are 16-byte aligned.
  template <int BK>
  __device__ void multiply(const uint16_t* As, int lda, const uint16_t* Bs, int ldb) {
    const int lane = threadIdx.x % 32;
    const int r = lane % 16, c = (lane / 16) * 8;  // this lane's row address in a 16 x 16 tile
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint32_t a[MI][4], b[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) ldmatrix_x4(a[i], As + (i * 16 + r) * lda + kk + c);
#pragma unroll
      for (int j = 0; j < NI; j += 2) {  // B rows kk..kk+15, columns 8j..8j+15: two fragments
        uint32_t q[4];
        ldmatrix_x4_trans(q, Bs + (kk + r) * ldb + j * 8 + c);
        b[j][0] = q[0], b[j][1] = q[1], b[j + 1][0] = q[2], b[j + 1][1] = q[3];
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) mma_16816<T>(acc[i][j], a[i], b[j]);
    }
  }

  // Rounds the tile to T and stores it to C at (row0, col0), dropping what is outside M x N.
  // Each lane holds pairs of horizontally adjacent results (layout above): 4-byte stores.
  __device__ void store(T* C, int M, int N, int row0, int col0, bool vecC) const {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int row = row0 + i * 16 + g, col = col0 + j * 8 + 2 * t;
        store2(C, acc[i][j][0], acc[i][j][1], row, col, M, N, vecC);
        store2(C, acc[i][j][2], acc[i][j][3], row + 8, col, M, N, vecC);
      }
  }
};
