// DeviceContext: the one GPU setup shared by every loader path: the device
// ordinal, the loader's own copy stream, and the GpuOps the ring's fences
// use. Shared (std::shared_ptr) by the loader and its slot ring, so a
// Batch's cuda_stream() stays valid while any batch lives; the destructor
// synchronizes the stream before destroying it. No call changes the
// caller's current device (gpu::ScopedDevice).
//
// Which memory: device = -1 is host memory. A GPU asked for where the
// machine has none (UNAVAILABLE "no CUDA device") falls back to host memory
// and says so in the note; any other error (a bad ordinal, a driver older
// than the runtime needs, a driver that failed to initialize, devices in
// exclusive or prohibited mode: FAILED_PRECONDITION naming the driver's CUDA
// version) is returned, never hidden.
#ifndef SHARDFEED_READER_DEVICE_CONTEXT_H_
#define SHARDFEED_READER_DEVICE_CONTEXT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "gpu/cuda_resources.h"
#include "reader/consumer_fence.h"

namespace shardfeed {

struct DeviceContext {
  int ordinal = -1;
  gpu::CudaStream stream;
  std::unique_ptr<GpuOps> ops;
  ~DeviceContext();
  void* stream_handle() const { return stream.get(); }
};

// The pure decision: the device to use (-1: host) for `requested` given what
// cudaGetDeviceCount reported. *note says why host memory is used.
absl::StatusOr<int> ChooseDevice(int requested, const absl::StatusOr<int>& device_count,
                                 std::string* note);

// nullptr: host memory (requested < 0, or no CUDA device; see *note).
absl::StatusOr<std::shared_ptr<DeviceContext>> OpenDeviceContext(int requested,
                                                                 std::string* note);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_DEVICE_CONTEXT_H_
