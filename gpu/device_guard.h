// ScopedDevice: makes a CUDA device current for one scope and restores the
// caller's current context afterwards (cudaSetDevice is per host thread, and
// a library must not change the device its caller's thread works on). The
// very context is restored (cuCtxSetCurrent), not just its device: a caller
// with its own context (PyCUDA's cuCtxCreate) gets that one back, never the
// device's primary context in its place. The library's work always runs in
// `ordinal`'s primary context: a caller's own context on the same device is
// switched away from too (the switch is skipped only when the current
// context is `ordinal`'s primary one, i.e. cudaSetDevice changed nothing).
//
//   gpu::ScopedDevice on(ordinal);
//   RETURN_IF_ERROR(on.status());
//   ... CUDA calls for `ordinal` ...
//   // the destructor restores the previous device
//
// A thread with no current CUDA context (a fresh worker thread, a Python
// thread dropping the last reference to a batch) reports device 0 from
// cudaGetDevice; restoring that with cudaSetDevice(0) would create GPU 0's
// primary context (CUDA >= 12) in every rank's process. So the previous
// device is restored only when the thread had a current context and it was
// another device; otherwise the thread stays on `ordinal`.
//
// For the scope the thread's stream-capture mode is relaxed (restored
// after): the library's allocations and syncs of its own stream and events
// neither fail nor invalidate a CUDA graph the caller (torch.cuda.graph,
// torch.compile "reduce-overhead") captures meanwhile.
//
// Not movable; one per scope and thread. With ordinal < 0 it does nothing.
// status() is the error of switching (UNAVAILABLE "no CUDA device" where
// there is none); the destructor never fails.
#ifndef SHARDFEED_GPU_DEVICE_GUARD_H_
#define SHARDFEED_GPU_DEVICE_GUARD_H_

#include "absl/status/status.h"

namespace shardfeed::gpu {

class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  int previous_ = -1;                // -1: nothing to restore
  void* previous_context_ = nullptr;  // CUcontext to restore (null: cudaSetDevice(previous_))
  int previous_capture_mode_ = -1;    // cudaStreamCaptureMode to restore (-1: none)
  absl::Status status_;
};

// Makes `ordinal` the calling thread's device for its lifetime (threads a
// loader owns call it once at start, so bare CUDA calls on them never
// initialize device 0), and its stream-capture mode relaxed (the thread
// never captures; its syncs and allocations must not break the training
// thread's graph capture). Nothing for ordinal < 0.
absl::Status BindThreadToDevice(int ordinal);

// Whether the calling thread has a current CUDA context (true where the
// driver cannot tell: then ScopedDevice restores as before).
bool ThreadHasCurrentContext();
// ScopedDevice's rule: restore `previous` only if the thread had a context
// and it differs from `ordinal`.
bool ShouldRestoreDevice(bool thread_had_context, int previous, int ordinal);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_DEVICE_GUARD_H_
