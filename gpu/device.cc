#include "gpu/device.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "gpu/cuda_status.h"
#include "gpu/device_guard.h"
#include "gpu/fill_kernel.h"
#include "record/status_macros.h"

namespace shardfeed::gpu {

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  RETURN_IF_CUDA_ERROR(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count == 0) return absl::UnavailableError("no CUDA device: the driver reports 0 devices");
  return count;
}

absl::StatusOr<std::string> DescribeDevice(int ordinal) {
  cudaDeviceProp prop;
  RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  return absl::StrFormat("GPU %d: %s, %.1f GiB, compute capability %d.%d", ordinal, prop.name,
                         prop.totalGlobalMem / double(1 << 30), prop.major, prop.minor);
}

absl::Status FillViaDevice(int ordinal, unsigned char value, unsigned char* dst, size_t n) {
  RETURN_IF_ERROR(CudaDeviceCount().status());
  ScopedDevice on(ordinal);  // the caller's current device is left as it was
  RETURN_IF_ERROR(on.status());
  unsigned char* device = nullptr;
  RETURN_IF_CUDA_ERROR(cudaMalloc(reinterpret_cast<void**>(&device), n == 0 ? 1 : n), "cudaMalloc");
  absl::Cleanup free_device = [device] { cudaFree(device); };
  RETURN_IF_CUDA_ERROR(LaunchFillBytes(device, n, value, nullptr), "FillBytes launch");
  RETURN_IF_CUDA_ERROR(cudaMemcpy(dst, device, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  return absl::OkStatus();
}

}  // namespace shardfeed::gpu
