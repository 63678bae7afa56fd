// Step 1: naive. One thread per element of C, every operand read straight from global memory.
//
// Each thread walks a whole row of A and a whole column of B: 2K loads for 2K flops, so
// the kernel is bound by memory traffic, not arithmetic. Worse, threadIdx.x runs down the
// rows of C, so the 32 threads of a warp read 32 different rows of A (32 separate
// transactions, no coalescing) and write C with a stride of N floats.
#include "common.cuh"

__global__ void naive_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

cudaError_t launch_naive(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  dim3 block(32, 32), grid(CEIL_DIV(M, 32), CEIL_DIV(N, 32));
  naive_kernel<<<grid, block, 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}
