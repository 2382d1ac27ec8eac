#include "gpu/gather_kernel.h"

#include <cstring>

#include "gpu/host_kernel.h"

namespace shardfeed::gpu {
namespace {

// Word is the copy unit: uint4 (16 bytes) when rows and pointers allow it,
// else bytes. One thread per word of the output, grid-stride.
template <typename Word>
SHARDFEED_HOST_DEVICE inline void GatherThread(const KernelThread& t, const Word* __restrict__ src,
                                               int64_t row_words, const int64_t* __restrict__ idx,
                                               int64_t rows, Word* __restrict__ dst) {
  const int64_t total = rows * row_words;
  for (int64_t i = t.global_x(); i < total; i += t.stride_x()) {
    const int64_t r = i / row_words;
    const int64_t w = i - r * row_words;
    dst[i] = src[idx[r] * row_words + w];
  }
}

template <typename Word>
__global__ void GatherKernel(const Word* __restrict__ src, int64_t row_words,
                             const int64_t* __restrict__ idx, int64_t rows, Word* __restrict__ dst) {
  GatherThread<Word>(KernelThread::Current(), src, row_words, idx, rows, dst);
}
SHARDFEED_HOST_KERNEL(GatherKernel<uint4>, GatherThread<uint4>);
SHARDFEED_HOST_KERNEL(GatherKernel<uint64_t>, GatherThread<uint64_t>);
SHARDFEED_HOST_KERNEL(GatherKernel<uint8_t>, GatherThread<uint8_t>);

// cudaLaunchKernel returns this launch's error; cudaGetLastError after a
// <<<>>> launch would return an earlier failure of the calling thread that
// its caller chose to ignore.
template <typename Word>
cudaError_t Launch(const void* src, int64_t row_words, const int64_t* idx, int64_t rows, void* dst,
                   cudaStream_t stream) {
  const int64_t total = rows * row_words;
  const int threads = 256;
  const int64_t wanted = (total + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 65535 * 4 ? wanted : 65535 * 4);
  const Word* s = static_cast<const Word*>(src);
  Word* d = static_cast<Word*>(dst);
  void* args[] = {&s, &row_words, &idx, &rows, &d};
  return cudaLaunchKernel(reinterpret_cast<const void*>(&GatherKernel<Word>), dim3(blocks),
                          dim3(threads), args, 0, stream);
}

}  // namespace

cudaError_t LaunchGatherRows(const void* src, size_t row_bytes, const int64_t* idx, int64_t rows,
                             void* dst, cudaStream_t stream) {
  if (rows == 0 || row_bytes == 0) return cudaSuccess;
  const bool aligned = row_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  if (aligned) return Launch<uint4>(src, static_cast<int64_t>(row_bytes / 16), idx, rows, dst, stream);
  if (row_bytes % 8 == 0 && reinterpret_cast<uintptr_t>(src) % 8 == 0 &&
      reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
    return Launch<uint64_t>(src, static_cast<int64_t>(row_bytes / 8), idx, rows, dst, stream);
  }
  return Launch<uint8_t>(src, static_cast<int64_t>(row_bytes), idx, rows, dst, stream);
}

void GatherRowsOnHost(const void* src, size_t row_bytes, const int64_t* idx, int64_t rows,
                      void* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(static_cast<char*>(dst) + r * row_bytes,
                static_cast<const char*>(src) + idx[r] * row_bytes, row_bytes);
  }
}

}  // namespace shardfeed::gpu
