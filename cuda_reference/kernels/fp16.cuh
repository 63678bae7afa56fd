// Shared by the tensor-core steps (9 onward): C = A @ B with A, B and C all fp16 or all
// bf16, row-major, accumulated in fp32. The kernels move operands as raw 16-bit words
// (uint16_t): staging into shared memory does not care which of the two formats they
// hold, only the tensor-core instruction and the final rounding of C do (Half16 below).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>
#include "common.cuh"

// The per-format pieces: rounding fp32 results to the output type, one or two at a time.
template <typename T>
struct Half16;
template <>
struct Half16<__half> {
  __device__ static __half round(float x) { return __float2half_rn(x); }
  __device__ static uint32_t round2(float lo, float hi) {  // two results as one 32-bit word
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};
template <>
struct Half16<__nv_bfloat16> {
  __device__ static __nv_bfloat16 round(float x) { return __float2bfloat16_rn(x); }
  __device__ static uint32_t round2(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

// Eight consecutive 16-bit elements (16 bytes) of row `row` of a rows x cols matrix with
// leading dimension ld, from column `col`; zero outside the matrix (all-zero bits are +0
// in both formats). One 16-byte load when `vec` says rows are 16-byte aligned (ld a
// multiple of 8 and an aligned base), else eight guarded 2-byte loads.
__device__ __forceinline__ uint4 load8(const uint16_t* p, int row, int col, int rows, int cols, int ld, bool vec) {
  if (row >= rows) return make_uint4(0, 0, 0, 0);
  const uint16_t* q = p + (size_t)row * ld + col;
  if (vec && col + 7 < cols) return *reinterpret_cast<const uint4*>(q);
  uint16_t e[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) e[i] = col + i < cols ? q[i] : uint16_t(0);
  return make_uint4(e[0] | (uint32_t(e[1]) << 16), e[2] | (uint32_t(e[3]) << 16), e[4] | (uint32_t(e[5]) << 16),
                    e[6] | (uint32_t(e[7]) << 16));
}

// Stores two fp32 results to C[row][col] and C[row][col + 1], rounded to T, dropping those
// outside the matrix. One 4-byte store when `vec` says every (row, even col) pair is
// 4-byte aligned (N even, aligned base).
template <typename T>
__device__ __forceinline__ void store2(T* C, float v0, float v1, int row, int col, int M, int N, bool vec) {
  if (row >= M || col >= N) return;
  T* q = C + (size_t)row * N + col;
  if (vec && col + 1 < N) {
    *reinterpret_cast<uint32_t*>(q) = Half16<T>::round2(v0, v1);
    return;
  }
  q[0] = Half16<T>::round(v0);
  if (col + 1 < N) q[1] = Half16<T>::round(v1);
}

// Host side: are all rows of a 16-bit matrix with leading dimension ld 16-byte aligned
// (for 8-element loads), or are all even elements 4-byte aligned (for paired stores)?
inline bool rows_aligned16_b16(const void* p, int ld) {
  return (reinterpret_cast<size_t>(p) % 16 == 0) && (ld % 8 == 0);
}
inline bool pairs_aligned_b16(const void* p, int ld) { return (reinterpret_cast<size_t>(p) % 4 == 0) && (ld % 2 == 0); }

// The 16-bit launchers take the element format as an int: 0 fp16, 1 bf16 (build.py).
enum { kFp16 = 0, kBf16 = 1 };
