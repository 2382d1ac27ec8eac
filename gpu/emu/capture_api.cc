// Emulated CUDA runtime: a stream's device and the per-thread stream
// capture mode (cudaThreadExchangeStreamCaptureMode).
#include <cuda_runtime_api.h>

#include "gpu/emu/machine.h"

using shardfeed::gpu::emu::CheckApiCall;
using shardfeed::gpu::emu::DeviceCall;
using shardfeed::gpu::emu::SetLastError;
using shardfeed::gpu::emu::Stream;

namespace {
thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;
}  // namespace

cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device) {
  DeviceCall call("cudaStreamGetDevice");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  *device = s->device;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  CheckApiCall("cudaThreadExchangeStreamCaptureMode");
  if (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal &&
      *mode != cudaStreamCaptureModeRelaxed) {
    return SetLastError(cudaErrorInvalidValue);
  }
  const cudaStreamCaptureMode previous = t_capture_mode;
  t_capture_mode = *mode;
  *mode = previous;
  return cudaSuccess;
}
