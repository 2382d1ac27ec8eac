#include "gpu/emu/test_kernels.h"

#include "gpu/host_kernel.h"

namespace shardfeed::gpu::emu_test {
namespace {

// 2D grids too: x and y blocks and threads are flattened into one index.
SHARDFEED_HOST_DEVICE inline void AddIntsThread(const KernelThread& t, const int32_t* src,
                                                int32_t* dst, int64_t n, int32_t add) {
  const int64_t threads = int64_t{t.block_dim.x} * t.block_dim.y;
  const int64_t block = int64_t{t.block.y} * t.grid_dim.x + t.block.x;
  const int64_t first = block * threads + int64_t{t.thread.y} * t.block_dim.x + t.thread.x;
  const int64_t stride = threads * t.grid_dim.x * t.grid_dim.y;
  for (int64_t i = first; i < n; i += stride) dst[i] = src[i] + add;
}

__global__ void AddInts(const int32_t* src, int32_t* dst, int64_t n, int32_t add) {
  AddIntsThread(KernelThread::Current(), src, dst, n, add);
}
SHARDFEED_HOST_KERNEL(AddInts, AddIntsThread);

}  // namespace

cudaError_t LaunchAddInts(const int32_t* src, int32_t* dst, int64_t n, int32_t add, dim3 grid,
                          dim3 block, cudaStream_t stream) {
  (void)cudaGetLastError();
  AddInts<<<grid, block, 0, stream>>>(src, dst, n, add);
  return cudaGetLastError();
}

}  // namespace shardfeed::gpu::emu_test
