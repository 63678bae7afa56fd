// Step 2: coalesced. The same arithmetic as step 1, with threadIdx.x running along a row of C.
//
// Now the 32 threads of a warp share one row of A (a broadcast: one transaction), read 32
// consecutive floats of B (one 128-byte transaction) and write 32 consecutive floats of C.
// Nothing is reused on chip yet: each thread still loads 2K floats. What changed is how
// many memory transactions those loads cost.
#include "common.cuh"

__global__ void coalesced_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

cudaError_t launch_coalesced(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  dim3 block(32, 32), grid(CEIL_DIV(N, 32), CEIL_DIV(M, 32));
  coalesced_kernel<<<grid, block, 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}
