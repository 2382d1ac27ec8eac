#include "gpu/device_guard.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "gpu/cuda_status.h"

namespace shardfeed::gpu {
namespace {

using CtxGetCurrent = CUresult (*)(CUcontext*);
using CtxSetCurrent = CUresult (*)(CUcontext);

// A driver function through the runtime's driver entry point (no link to
// libcuda); null when the driver does not offer it.
void* DriverEntryPoint(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();  // an old driver's refusal is no error of the caller's
    return nullptr;
  }
  return p;
}

CtxGetCurrent DriverCtxGetCurrent() {
  static const CtxGetCurrent fn =
      reinterpret_cast<CtxGetCurrent>(DriverEntryPoint("cuCtxGetCurrent"));
  return fn;
}

CtxSetCurrent DriverCtxSetCurrent() {
  static const CtxSetCurrent fn =
      reinterpret_cast<CtxSetCurrent>(DriverEntryPoint("cuCtxSetCurrent"));
  return fn;
}

// The calling thread's current context; false when the driver cannot tell.
bool CurrentContext(CUcontext* c) {
  CtxGetCurrent get = DriverCtxGetCurrent();
  *c = nullptr;
  return get != nullptr && get(c) == CUDA_SUCCESS;
}

}  // namespace

bool ThreadHasCurrentContext() {
  CUcontext c = nullptr;
  if (DriverCtxGetCurrent() == nullptr) return true;  // unknown: keep the old behaviour (restore)
  return CurrentContext(&c) && c != nullptr;
}

bool ShouldRestoreDevice(bool thread_had_context, int previous, int ordinal) {
  return thread_had_context && previous >= 0 && previous != ordinal;
}

ScopedDevice::ScopedDevice(int ordinal) {
  if (ordinal < 0) return;
  // Relaxed for this scope: the library's allocations (a growing ring) and
  // syncs of its own stream and events stay legal while the caller, or
  // another thread, captures a CUDA graph in global mode.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  if (cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess) {
    previous_capture_mode_ = static_cast<int>(mode);
  } else {
    (void)cudaGetLastError();
  }
  int current = -1;
  cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaGetDevice", __FILE__, __LINE__);
    return;
  }
  // Read before cudaSetDevice, which makes the device's primary context
  // current in place of the caller's (maybe its own, from cuCtxCreate).
  CUcontext context = nullptr;
  const bool known = CurrentContext(&context) && DriverCtxSetCurrent() != nullptr;
  const bool had_context = known ? context != nullptr : ThreadHasCurrentContext();
  // Without the driver's view only the device can be compared. With it, the
  // same device is not enough: the caller's own context (cuCtxCreate) on
  // `ordinal` must not run the library's work either.
  if (!known && current == ordinal && had_context) return;
  e = cudaSetDevice(ordinal);  // ordinal's primary context (nothing changes if current)
  if (e != cudaSuccess) {
    status_ = CudaStatus(e, "cudaSetDevice", __FILE__, __LINE__);
    return;
  }
  if (known) {
    CUcontext now = nullptr;
    if (had_context && (!CurrentContext(&now) || now != context)) {
      previous_ = current;
      previous_context_ = context;  // whichever it was, that very context comes back
    }
  } else if (ShouldRestoreDevice(had_context, current, ordinal)) {
    previous_ = current;
  }
}

ScopedDevice::~ScopedDevice() {
  if (previous_context_ != nullptr) {
    // The caller's own context, exactly (cudaSetDevice would put the
    // device's primary context in its place).
    (void)DriverCtxSetCurrent()(static_cast<CUcontext>(previous_context_));
  } else if (previous_ >= 0) {
    (void)cudaSetDevice(previous_);
  }
  if (previous_capture_mode_ >= 0) {
    auto mode = static_cast<cudaStreamCaptureMode>(previous_capture_mode_);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
  }
}

absl::Status BindThreadToDevice(int ordinal) {
  if (ordinal < 0) return absl::OkStatus();
  // The loader's own thread never captures: relaxed for good, so its
  // allocations, event and stream syncs do not break (and are not refused
  // during) a graph capture on the training thread.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaError_t e = cudaThreadExchangeStreamCaptureMode(&mode);
  if (e != cudaSuccess) return CudaStatus(e, "cudaThreadExchangeStreamCaptureMode", __FILE__, __LINE__);
  e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) return CudaStatus(e, "cudaSetDevice", __FILE__, __LINE__);
  return absl::OkStatus();
}

}  // namespace shardfeed::gpu
