// Emulated CUDA runtime: a stream's device, the per-thread stream capture
// mode (cudaThreadExchangeStreamCaptureMode), and stream capture as far as
// which calls an active capture forbids (begin, end, is-capturing; see
// CaptureForbidsLocked in machine.h). No graph is built.
#include <cuda_runtime_api.h>

#include <map>
#include <thread>

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

// ---- Stream capture: which calls an active capture forbids ----
namespace {

struct Capture {
  cudaStreamCaptureMode mode;
  std::thread::id thread;
  int device;
  bool invalidated = false;
};
std::map<const Stream*, Capture> g_captures;  // guarded by Machine::mu

}  // namespace

namespace shardfeed::gpu::emu {

cudaError_t CaptureForbidsLocked(int device, bool whole_device) {
  const std::thread::id self = std::this_thread::get_id();
  bool forbidden = false;
  for (auto& [stream, c] : g_captures) {
    if (c.invalidated) continue;
    bool forbids = false;
    if (whole_device) {
      forbids = device < 0 || c.device == device;  // whatever the modes
    } else if (t_capture_mode == cudaStreamCaptureModeRelaxed) {
      forbids = false;
    } else if (c.thread == self) {
      forbids = c.mode != cudaStreamCaptureModeRelaxed;
    } else {
      forbids = t_capture_mode == cudaStreamCaptureModeGlobal &&
                c.mode == cudaStreamCaptureModeGlobal;
    }
    if (forbids) {
      c.invalidated = true;
      forbidden = true;
    }
  }
  return forbidden ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

}  // namespace shardfeed::gpu::emu

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  DeviceCall call("cudaStreamBeginCapture");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  if (s->legacy) return SetLastError(cudaErrorStreamCaptureUnsupported);
  if (g_captures.count(s) != 0) return SetLastError(cudaErrorIllegalState);
  g_captures[s] = Capture{mode, std::this_thread::get_id(), s->device};
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  DeviceCall call("cudaStreamEndCapture");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  auto it = g_captures.find(s);
  if (it == g_captures.end()) return SetLastError(cudaErrorIllegalState);
  const bool invalidated = it->second.invalidated;
  g_captures.erase(it);
  // No graph is built: a non-null placeholder for a valid capture.
  *graph = invalidated ? nullptr : reinterpret_cast<cudaGraph_t>(s);
  return invalidated ? SetLastError(cudaErrorStreamCaptureInvalidated) : cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  DeviceCall call("cudaStreamIsCapturing");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  auto it = g_captures.find(s);
  *status = it == g_captures.end()       ? cudaStreamCaptureStatusNone
            : it->second.invalidated ? cudaStreamCaptureStatusInvalidated
                                     : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}
