#include "gpu/fill_kernel.h"

#include "gpu/host_kernel.h"

namespace shardfeed::gpu {
namespace {

SHARDFEED_HOST_DEVICE inline void FillBytesThread(const KernelThread& t, unsigned char* dst,
                                                  size_t n, unsigned char value) {
  for (size_t i = t.global_x(); i < n; i += t.stride_x()) dst[i] = value;
}

__global__ void FillBytes(unsigned char* dst, size_t n, unsigned char value) {
  FillBytesThread(KernelThread::Current(), dst, n, value);
}
SHARDFEED_HOST_KERNEL(FillBytes, FillBytesThread);

}  // namespace

cudaError_t LaunchFillBytes(unsigned char* dst, size_t n, unsigned char value,
                            cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const int threads = 256;
  const size_t wanted = (n + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 4096 ? wanted : 4096);
  // This launch's error (cudaGetLastError would also return an earlier,
  // ignored failure of the calling thread).
  void* args[] = {&dst, &n, &value};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&FillBytes), dim3(blocks), dim3(threads),
                          args, 0, stream);
}

}  // namespace shardfeed::gpu
