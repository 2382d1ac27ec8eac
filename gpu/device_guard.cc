#include "gpu/device_guard.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gpu/cuda_status.h"

namespace shardfeed::gpu {
namespace {

using CtxGetCurrent = CUresult (*)(CUcontext*);

// cuCtxGetCurrent through the runtime's driver entry point (no link to
// libcuda); null when the driver does not offer it.
CtxGetCurrent DriverCtxGetCurrent() {
  static const CtxGetCurrent fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &p, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      return static_cast<CtxGetCurrent>(nullptr);
    }
    return reinterpret_cast<CtxGetCurrent>(p);
  }();
  return fn;
}

}  // namespace

bool ThreadHasCurrentContext() {
  CtxGetCurrent get = DriverCtxGetCurrent();
  if (get == nullptr) return true;  // unknown: keep the old behaviour (restore)
  CUcontext c = nullptr;
  return get(&c) == CUDA_SUCCESS && c != nullptr;
}

bool ShouldRestoreDevice(bool thread_had_context, int previous, int ordinal) {
  return thread_had_context && previous >= 0 && previous != ordinal;
}

ScopedDevice::ScopedDevice(int ordinal) {
  if (ordinal < 0) return;
  int current = -1;
  cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaGetDevice", __FILE__, __LINE__);
    return;
  }
  // Checked before cudaSetDevice, which makes a context current.
  const bool had_context = ThreadHasCurrentContext();
  if (current == ordinal && had_context) return;
  e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaSetDevice", __FILE__, __LINE__);
    return;
  }
  if (ShouldRestoreDevice(had_context, current, ordinal)) previous_ = current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) (void)cudaSetDevice(previous_);
}

absl::Status BindThreadToDevice(int ordinal) {
  if (ordinal < 0) return absl::OkStatus();
  const cudaError_t e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) return CudaStatus(e, "cudaSetDevice", __FILE__, __LINE__);
  return absl::OkStatus();
}

}  // namespace shardfeed::gpu
