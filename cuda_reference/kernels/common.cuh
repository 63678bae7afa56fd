// Shared by every kernel of the ladder: C = A @ B, fp32, all three row-major:
// A is M x K, B is K x N, C is M x N. No torch headers here: nvcc spends most of a
// torch extension's build time parsing them, and the launchers only need raw pointers.
#pragma once
#include <cuda_runtime.h>
#include <atomic>

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

// Four consecutive floats of row `row` of a rows x cols matrix (leading dimension ld),
// starting at column `col`; zero outside the matrix. One 16-byte load when `vec` says the
// rows are 16-byte aligned and the four lie inside, four guarded loads otherwise.
__device__ __forceinline__ float4 load4(const float* p, int row, int col, int rows, int cols, int ld,
                                        bool vec) {
  const float* q = p + (size_t)row * ld + col;
  if (vec && row < rows && col + 3 < cols) return *reinterpret_cast<const float4*>(q);
  float4 v;
  bool in = row < rows;
  v.x = (in && col + 0 < cols) ? q[0] : 0.f;
  v.y = (in && col + 1 < cols) ? q[1] : 0.f;
  v.z = (in && col + 2 < cols) ? q[2] : 0.f;
  v.w = (in && col + 3 < cols) ? q[3] : 0.f;
  return v;
}

// Stores four consecutive results, dropping those outside the matrix.
__device__ __forceinline__ void store4(float* p, float4 v, int row, int col, int rows, int cols, int ld,
                                       bool vec) {
  if (row >= rows) return;
  float* q = p + (size_t)row * ld + col;
  if (vec && col + 3 < cols) {
    *reinterpret_cast<float4*>(q) = v;
    return;
  }
  if (col + 0 < cols) q[0] = v.x;
  if (col + 1 < cols) q[1] = v.y;
  if (col + 2 < cols) q[2] = v.z;
  if (col + 3 < cols) q[3] = v.w;
}

// True when every row of a matrix with leading dimension ld starts 16-byte aligned.
inline bool rows_aligned16(const void* p, int ld) {
  return (reinterpret_cast<size_t>(p) % 16 == 0) && (ld % 4 == 0);
}

// Over 48 KiB of dynamic shared memory is opt-in, per kernel and per device: done once for
// each device this process launches `kernel` on (the caller has made it current). One
// instantiation, hence one set of flags, per kernel.
template <auto kernel>
cudaError_t opt_in_dynamic_smem(int bytes) {
  static std::atomic<bool> opted_in[64];
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  if (dev < 64 && opted_in[dev].load()) return cudaSuccess;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (err == cudaSuccess && dev < 64) opted_in[dev].store(true);
  return err;
}
