#include "gpu/device_guard.h"

#include <cuda_runtime_api.h>

#include "gpu/cuda_status.h"

namespace shardfeed::gpu {

ScopedDevice::ScopedDevice(int ordinal) {
  if (ordinal < 0) return;
  int current = -1;
  cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaGetDevice", __FILE__, __LINE__);
    return;
  }
  if (current == ordinal) return;
  e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaSetDevice", __FILE__, __LINE__);
    return;
  }
  previous_ = current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace shardfeed::gpu
