// RAII for CUDA resources, one error model (absl::Status). Each class is
// move-only with a static Create(); destructors never fail (errors while
// tearing down, e.g. cudaErrorCudartUnloading at exit, are ignored).
// All Create() calls return UNAVAILABLE "no CUDA device" where there is none.
//
// Example:
//   ASSIGN_OR_RETURN(PinnedBuffer host, PinnedBuffer::Create(bytes));
//   ASSIGN_OR_RETURN(DeviceBuffer dev, DeviceBuffer::Create(bytes));
//   ASSIGN_OR_RETURN(CudaStream stream, CudaStream::Create());
//   RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(dev.get(), host.get(), bytes,
//                        cudaMemcpyHostToDevice, stream.get()), "copy");
#ifndef SHARDFEED_GPU_CUDA_RESOURCES_H_
#define SHARDFEED_GPU_CUDA_RESOURCES_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"

namespace shardfeed::gpu {

// Page-locked host memory (cudaHostAlloc), the source of async copies.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  static absl::StatusOr<PinnedBuffer> Create(size_t bytes);
  PinnedBuffer(PinnedBuffer&& o) noexcept { *this = std::move(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  ~PinnedBuffer();
  void* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

// Device memory (cudaMalloc) on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Create(size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  void* get() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
};

class CudaStream {
 public:
  CudaStream() = default;
  static absl::StatusOr<CudaStream> Create();  // non-blocking stream
  CudaStream(CudaStream&& o) noexcept { *this = std::move(o); }
  CudaStream& operator=(CudaStream&& o) noexcept;
  ~CudaStream();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  CudaEvent() = default;
  static absl::StatusOr<CudaEvent> Create(bool timing = false);
  CudaEvent(CudaEvent&& o) noexcept { *this = std::move(o); }
  CudaEvent& operator=(CudaEvent&& o) noexcept;
  ~CudaEvent();
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_CUDA_RESOURCES_H_
