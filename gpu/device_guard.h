// ScopedDevice: makes a CUDA device current for one scope and restores the
// caller's current device afterwards (cudaSetDevice is per host thread, and
// a library must not change the device its caller's thread works on).
//
//   gpu::ScopedDevice on(ordinal);
//   RETURN_IF_ERROR(on.status());
//   ... CUDA calls for `ordinal` ...
//   // the destructor restores the previous device
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
  int previous_ = -1;  // -1: nothing to restore
  absl::Status status_;
};

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_DEVICE_GUARD_H_
