// Kernels for the emulator's own tests (compiled by nvcc like every kernel).
#ifndef SHARDFEED_GPU_EMU_TEST_KERNELS_H_
#define SHARDFEED_GPU_EMU_TEST_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace shardfeed::gpu::emu_test {

// dst[i] = src[i] + add for i < n, with the given launch shape (grid-stride).
cudaError_t LaunchAddInts(const int32_t* src, int32_t* dst, int64_t n, int32_t add, dim3 grid,
                          dim3 block, cudaStream_t stream);

}  // namespace shardfeed::gpu::emu_test

#endif  // SHARDFEED_GPU_EMU_TEST_KERNELS_H_
