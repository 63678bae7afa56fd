// Step 3: shared-memory tiling, the classic kernel. TILE x TILE threads own a TILE x TILE
// tile of C. Per step along K each thread loads one element of A and one of B into
// __shared__ tiles, __syncthreads(), accumulates TILE products from shared memory,
// __syncthreads() again (so nobody overwrites a tile still being read), and slides on.
//
// Every element loaded from global memory is now used TILE times, so global reads fall
// from 2K per output to 2K / TILE. The bottleneck moves to shared memory: each
// fused multiply-add still needs two shared-memory loads. Out-of-range elements are
// loaded as zero, so any M, N and K work, not only multiples of TILE.
#include "common.cuh"

template <int TILE>
__global__ void tiled_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[(size_t)row * K + t + tx] : 0.f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(size_t)(t + ty) * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

template <int TILE>
cudaError_t launch_tiled(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  dim3 block(TILE, TILE), grid(CEIL_DIV(N, TILE), CEIL_DIV(M, TILE));
  tiled_kernel<TILE><<<grid, block, 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}

cudaError_t launch_tiled_8(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_tiled<8>(M, N, K, A, B, C, s);
}
cudaError_t launch_tiled_16(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_tiled<16>(M, N, K, A, B, C, s);
}
cudaError_t launch_tiled_32(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  return launch_tiled<32>(M, N, K, A, B, C, s);
}
