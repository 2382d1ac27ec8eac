// The fused device transform of gpu/image_transform.h (uint8 -> normalized
// NCHW float32/float16/bfloat16 with optional crop/flip): a 2D grid per
// image and channel, a few pixels a thread, the crop/flip drawn once per
// image and thread, 32-bit indexing inside an image. Compiled by nvcc (and
// run as a host loop by the emulated runtime); callable from host C++.
//
// `in` and `out` are device pointers; a and b are the per-channel
// coefficients from NormalizationCoefficients, passed by value (at most
// kMaxTransformChannels, image_transform.h). Returns this launch's error
// (cudaLaunchKernel's, never an earlier one of the calling thread); the
// caller turns it into a Status.
#ifndef SHARDFEED_GPU_IMAGE_TRANSFORM_KERNEL_H_
#define SHARDFEED_GPU_IMAGE_TRANSFORM_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpu/image_transform.h"

namespace shardfeed::gpu {

// Requires t.Validate() (checked: cudaErrorInvalidValue), so at most
// kMaxTransformChannels channels.
cudaError_t LaunchImageTransform(const ImageTransform& t, const uint8_t* in, int64_t rows,
                                 uint64_t first_sample, void* out, cudaStream_t stream);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_IMAGE_TRANSFORM_KERNEL_H_
