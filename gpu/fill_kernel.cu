#include "gpu/fill_kernel.h"

namespace shardfeed::gpu {
namespace {

__global__ void FillBytes(unsigned char* dst, size_t n, unsigned char value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    dst[i] = value;
  }
}

}  // namespace

cudaError_t LaunchFillBytes(unsigned char* dst, size_t n, unsigned char value,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const size_t wanted = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 4096 ? wanted : 4096);
  FillBytes<<<blocks, threads, 0, stream>>>(dst, n, value);
  return cudaGetLastError();
}

}  // namespace shardfeed::gpu
