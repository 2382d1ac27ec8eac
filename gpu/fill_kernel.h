// A tiny CUDA kernel (compiled by nvcc): sets n bytes at device pointer dst.
#ifndef SHARDFEED_GPU_FILL_KERNEL_H_
#define SHARDFEED_GPU_FILL_KERNEL_H_

#include <cstddef>

#include <cuda_runtime_api.h>

namespace shardfeed::gpu {

// Enqueues the kernel on `stream`; returns this launch's error, if any (not
// an earlier one of the calling thread).
cudaError_t LaunchFillBytes(unsigned char* dst, size_t n, unsigned char value,
                            cudaStream_t stream);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_FILL_KERNEL_H_
