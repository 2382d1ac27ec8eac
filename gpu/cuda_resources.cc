#include "gpu/cuda_resources.h"

#include "gpu/cuda_status.h"

namespace shardfeed::gpu {

absl::StatusOr<PinnedBuffer> PinnedBuffer::Create(size_t bytes) {
  PinnedBuffer b;
  RETURN_IF_CUDA_ERROR(cudaHostAlloc(&b.ptr_, bytes == 0 ? 1 : bytes, cudaHostAllocPortable),
                       "cudaHostAlloc");
  b.size_ = bytes;
  return b;
}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(size_, o.size_);
  return *this;
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) (void)cudaFreeHost(ptr_);
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Create(size_t bytes) {
  DeviceBuffer b;
  RETURN_IF_CUDA_ERROR(cudaMalloc(&b.ptr_, bytes == 0 ? 1 : bytes), "cudaMalloc");
  b.size_ = bytes;
  return b;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(size_, o.size_);
  return *this;
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) (void)cudaFree(ptr_);
}

absl::StatusOr<CudaStream> CudaStream::Create() {
  CudaStream s;
  RETURN_IF_CUDA_ERROR(cudaStreamCreateWithFlags(&s.stream_, cudaStreamNonBlocking),
                       "cudaStreamCreate");
  return s;
}
CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
  std::swap(stream_, o.stream_);
  return *this;
}
CudaStream::~CudaStream() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

absl::StatusOr<CudaEvent> CudaEvent::Create(bool timing) {
  CudaEvent e;
  RETURN_IF_CUDA_ERROR(
      cudaEventCreateWithFlags(&e.event_, timing ? cudaEventDefault : cudaEventDisableTiming),
      "cudaEventCreate");
  return e;
}
CudaEvent& CudaEvent::operator=(CudaEvent&& o) noexcept {
  std::swap(event_, o.event_);
  return *this;
}
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) (void)cudaEventDestroy(event_);
}

}  // namespace shardfeed::gpu
