// CUDA errors as absl::Status: the one error model, on the GPU side too.
//
//   RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(...), "copy batch to device");
//
// The message carries the call site (file:line), cudaGetErrorName and
// cudaGetErrorString. Only "no CUDA device" (cudaErrorNoDevice, or no NVIDIA
// driver installed at all) maps to UNAVAILABLE, so callers fall back to host
// memory. A driver older than this build's runtime needs, a driver that
// failed to initialize and devices that are unavailable (exclusive or
// prohibited compute mode) are FAILED_PRECONDITION naming the driver's and
// the runtime's CUDA versions: a GPU machine that cannot run the GPU path
// must say so, never deliver host tensors silently.
#ifndef SHARDFEED_GPU_CUDA_STATUS_H_
#define SHARDFEED_GPU_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace shardfeed::gpu {

// "12.4" from CUDA's 12040.
inline std::string CudaVersionText(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

// The CUDA version the installed driver supports (0: no driver installed).
inline int CudaDriverVersion() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) v = 0;
  return v;
}

// "the NVIDIA driver supports CUDA 12.4, this build's CUDA runtime is 13.0".
inline std::string CudaVersionsNote(int driver_version) {
  int runtime = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  return absl::StrCat(driver_version == 0 ? "no NVIDIA driver is installed"
                                          : absl::StrCat("the NVIDIA driver supports CUDA ",
                                                         CudaVersionText(driver_version)),
                      ", this build's CUDA runtime is ", CudaVersionText(runtime));
}

inline absl::Status CudaStatus(cudaError_t error, const char* what, const char* file = "",
                               int line = 0) {
  if (error == cudaSuccess) return absl::OkStatus();
  std::string message = absl::StrCat(what, ": ", cudaGetErrorName(error), ": ",
                                     cudaGetErrorString(error));
  if (line > 0) message = absl::StrCat(message, " [", file, ":", line, "]");
  switch (error) {
    case cudaErrorNoDevice:
      return absl::UnavailableError(absl::StrCat("no CUDA device: ", message));
    case cudaErrorInsufficientDriver:
    case cudaErrorInitializationError:
    case cudaErrorDevicesUnavailable: {
      const int driver = CudaDriverVersion();
      if (error == cudaErrorInsufficientDriver && driver == 0) {  // no driver: no GPU here
        return absl::UnavailableError(
            absl::StrCat("no CUDA device: ", message, " (", CudaVersionsNote(driver), ")"));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          message, " (", CudaVersionsNote(driver),
          error == cudaErrorInsufficientDriver
              ? "): update the NVIDIA driver, or pass device=-1 for host memory"
              : error == cudaErrorDevicesUnavailable
                    ? "): the GPUs are busy or in exclusive/prohibited compute mode "
                      "(nvidia-smi -q -d COMPUTE)"
                    : "): the driver failed to initialize (nvidia-smi says why)"));
    }
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
