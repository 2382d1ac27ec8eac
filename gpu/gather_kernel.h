// Gathers rows of a device-resident table by device indices: the mini-batch
// step of the device cache. dst row i = src row idx[i]; every idx[i] must be
// in [0, src_rows) (the caller builds them from a permutation of
// [0, src_rows)). Compiled by nvcc; returns this launch's error (not an
// earlier one of the calling thread).
#ifndef SHARDFEED_GPU_GATHER_KERNEL_H_
#define SHARDFEED_GPU_GATHER_KERNEL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace shardfeed::gpu {

cudaError_t LaunchGatherRows(const void* src, size_t row_bytes, const int64_t* idx, int64_t rows,
                             void* dst, cudaStream_t stream);

// The host reference (and the host-memory cache's gather).
void GatherRowsOnHost(const void* src, size_t row_bytes, const int64_t* idx, int64_t rows,
                      void* dst);

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_GATHER_KERNEL_H_
