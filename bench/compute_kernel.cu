#include "bench/compute_kernel.h"

#include <cmath>

#include "gpu/host_kernel.h"

namespace shardfeed::bench {
namespace {

using gpu::KernelThread;

SHARDFEED_HOST_DEVICE inline void BusyComputeThread(const KernelThread& t, float* data, int n,
                                                    int iterations) {
  const int64_t i = t.global_x();
  if (i >= n) return;
  float x = data[i], y = 1.0001f;
  for (int k = 0; k < iterations; ++k) x = fmaf(x, y, 0.5f) * 0.999f;
  data[i] = x;
}

__global__ void BusyCompute(float* data, int n, int iterations) {
  BusyComputeThread(KernelThread::Current(), data, n, iterations);
}
SHARDFEED_HOST_KERNEL(BusyCompute, BusyComputeThread);

}  // namespace

cudaError_t LaunchBusyCompute(float* data, int n, int iterations, cudaStream_t stream) {
  void* args[] = {&data, &n, &iterations};  // this launch's error, not an earlier one
  return cudaLaunchKernel(reinterpret_cast<const void*>(&BusyCompute), dim3((n + 255) / 256),
                          dim3(256), args, 0, stream);
}

}  // namespace shardfeed::bench
