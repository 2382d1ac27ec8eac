// Finding a CUDA device. Every function is safe to call on a machine with no
// GPU and no driver: it returns UNAVAILABLE "no CUDA device: ..." instead of
// crashing, so callers fall back to host memory. A driver too old for this
// build's runtime, one that failed to initialize, or devices that are all
// unavailable are FAILED_PRECONDITION naming the CUDA versions (see
// gpu/cuda_status.h): never a silent fallback. Thread-safe.
#ifndef SHARDFEED_GPU_DEVICE_H_
#define SHARDFEED_GPU_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"

namespace shardfeed::gpu {

// The number of usable CUDA devices (> 0), UNAVAILABLE "no CUDA device", or
// FAILED_PRECONDITION (a driver that cannot run this build).
absl::StatusOr<int> CudaDeviceCount();

// One line describing device `ordinal` (name, memory, compute capability).
absl::StatusOr<std::string> DescribeDevice(int ordinal);

// Fills n bytes at host `dst` by running a kernel on device `ordinal`
// (device buffer, kernel, copy back): a smoke test that the toolchain,
// driver and device work together. The caller's current device (context)
// is left as it was.
absl::Status FillViaDevice(int ordinal, unsigned char value, unsigned char* dst, size_t n);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_DEVICE_H_
