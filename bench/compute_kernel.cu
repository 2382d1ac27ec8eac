#include "bench/compute_kernel.h"

namespace shardfeed::bench {
namespace {

__global__ void BusyCompute(float* data, int n, int iterations) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = data[i], y = 1.0001f;
  for (int k = 0; k < iterations; ++k) x = fmaf(x, y, 0.5f) * 0.999f;
  data[i] = x;
}

}  // namespace

cudaError_t LaunchBusyCompute(float* data, int n, int iterations, cudaStream_t stream) {
  BusyCompute<<<(n + 255) / 256, 256, 0, stream>>>(data, n, iterations);
  return cudaGetLastError();
}

}  // namespace shardfeed::bench
