#include "reader/device_context.h"

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "gpu/cuda_status.h"
#include "gpu/device.h"
#include "gpu/device_guard.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// CUDA calls for one device, each under a ScopedDevice (so none of them, on
// a thread without a context, initializes device 0: see gpu/device_guard.h).
class CudaOps : public GpuOps {
 public:
  explicit CudaOps(int ordinal) : ordinal_(ordinal) {}
  absl::StatusOr<int> StreamDevice(void* stream) override {
    int device = -1;
    const auto s = static_cast<cudaStream_t>(stream);
    if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread) {
      // A pseudo-handle names a stream of the batch's device (DLPack: the
      // stream is on the tensor's device), never of the device that happens
      // to be current on the releasing thread (which may have none at all).
      return ordinal_;
    }
    gpu::ScopedDevice on(ordinal_);  // a handle knows its device; no bare call
    RETURN_IF_ERROR(on.status());
    RETURN_IF_CUDA_ERROR(cudaStreamGetDevice(s, &device), "cudaStreamGetDevice of a consumer stream");
    return device;
  }
  absl::StatusOr<void*> CreateEvent(int device) override {
    gpu::ScopedDevice on(device);
    RETURN_IF_ERROR(on.status());
    cudaEvent_t e = nullptr;
    RETURN_IF_CUDA_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return static_cast<void*>(e);
  }
  void DestroyEvent(void* event, int device) override {
    gpu::ScopedDevice on(device);  // a bare call would initialize device 0 here
    (void)cudaEventDestroy(static_cast<cudaEvent_t>(event));
  }
  absl::Status RecordEvent(void* event, int device, void* stream) override {
    gpu::ScopedDevice on(device);  // stream 0 is then that device's legacy stream
    RETURN_IF_ERROR(on.status());
    RETURN_IF_CUDA_ERROR(
        cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
        "cudaEventRecord on the consumer's stream");
    return absl::OkStatus();
  }
  absl::Status StreamWaitEvent(void* stream, void* event) override {
    gpu::ScopedDevice on(ordinal_);
    RETURN_IF_ERROR(on.status());
    RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                             static_cast<cudaEvent_t>(event), 0),
                         "cudaStreamWaitEvent");
    return absl::OkStatus();
  }
  absl::Status SynchronizeDevice() override {
    gpu::ScopedDevice on(ordinal_);
    RETURN_IF_ERROR(on.status());
    RETURN_IF_CUDA_ERROR(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return absl::OkStatus();
  }

 private:
  const int ordinal_;
};

}  // namespace

DeviceContext::~DeviceContext() {
  if (ordinal < 0 || stream.get() == nullptr) return;
  gpu::ScopedDevice on(ordinal);
  (void)cudaStreamSynchronize(stream.get());  // nothing of ours in flight after this
  stream = gpu::CudaStream();  // destroyed here, under the guard, not after it
}

absl::StatusOr<int> ChooseDevice(int requested, const absl::StatusOr<int>& device_count,
                                 std::string* note) {
  if (requested < 0) return -1;
  if (!device_count.ok()) {
    if (!absl::IsUnavailable(device_count.status())) return device_count.status();
    *note = absl::StrCat("GPU ", requested, " unavailable (", device_count.status().message(),
                         "); delivering batches in host memory");
    return -1;
  }
  if (requested >= *device_count) {
    return absl::InvalidArgumentError(absl::StrCat("device ", requested, " does not exist: only ",
                                                   *device_count, " CUDA devices"));
  }
  return requested;
}

absl::StatusOr<std::shared_ptr<DeviceContext>> OpenDeviceContext(int requested,
                                                                 std::string* note) {
  if (requested < 0) return std::shared_ptr<DeviceContext>();
  ASSIGN_OR_RETURN(int device, ChooseDevice(requested, gpu::CudaDeviceCount(), note));
  if (device < 0) return std::shared_ptr<DeviceContext>();
  gpu::ScopedDevice on(device);
  RETURN_IF_ERROR(on.status());
  auto ctx = std::make_shared<DeviceContext>();
  ASSIGN_OR_RETURN(ctx->stream, gpu::CudaStream::Create());
  ctx->ordinal = device;
  ctx->ops = std::make_unique<CudaOps>(device);
  return ctx;
}

}  // namespace shardfeed
