// CUDA errors as absl::Status: the one error model, on the GPU side too.
//
//   RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(...), "copy batch to device");
//
// The message carries the call site (file:line), cudaGetErrorName and
// cudaGetErrorString. "No device" and "no (or too old a) driver" map to
// UNAVAILABLE so callers can fall back to host memory.
#ifndef SHARDFEED_GPU_CUDA_STATUS_H_
#define SHARDFEED_GPU_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::gpu {

inline absl::Status CudaStatus(cudaError_t error, const char* what, const char* file = "",
                               int line = 0) {
  if (error == cudaSuccess) return absl::OkStatus();
  std::string message = absl::StrCat(what, ": ", cudaGetErrorName(error), ": ",
                                     cudaGetErrorString(error));
  if (line > 0) message = absl::StrCat(message, " [", file, ":", line, "]");
  switch (error) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorDevicesUnavailable:
      return absl::UnavailableError(absl::StrCat("no CUDA device: ", message));
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(message);
    case cudaErrorInvalidValue:
    case cudaErrorInvalidDevice:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace shardfeed::gpu

#define RETURN_IF_CUDA_ERROR(expr, what)                                             \
  do {                                                                               \
    const cudaError_t shardfeed_cuda_error_ = (expr);                                \
    if (shardfeed_cuda_error_ != cudaSuccess) {                                      \
      return ::shardfeed::gpu::CudaStatus(shardfeed_cuda_error_, what, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

#endif  // SHARDFEED_GPU_CUDA_STATUS_H_
