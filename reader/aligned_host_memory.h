// Host memory for batch tensors, aligned for every DLPack consumer.
//
// TensorFlow's kernels (Eigen) check that a tensor's data is 64-byte aligned
// (`Check failed: IsAligned()` aborts the process otherwise), NumPy and torch
// are faster on aligned data: every host tensor a batch delivers starts on a
// kHostTensorAlignment boundary. (Device memory comes from cudaMalloc, which
// aligns to at least 256 bytes; pinned memory from cudaHostAlloc is
// page-aligned.)
//
// AlignedVector<T> is a std::vector whose storage is so aligned; its data()
// is never null once reserved (an empty tensor still has an aligned
// address). Ownership and threading as std::vector. Allocation failure
// throws std::bad_alloc, as std::vector does (SlotRing turns it into
// RESOURCE_EXHAUSTED).
#ifndef SHARDFEED_READER_ALIGNED_HOST_MEMORY_H_
#define SHARDFEED_READER_ALIGNED_HOST_MEMORY_H_

#include <cstddef>
#include <new>
#include <vector>

namespace shardfeed {

inline constexpr size_t kHostTensorAlignment = 64;

template <typename T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    return static_cast<T*>(
        ::operator new(n * sizeof(T), std::align_val_t{kHostTensorAlignment}));
  }
  void deallocate(T* p, size_t) noexcept {
    ::operator delete(p, std::align_val_t{kHostTensorAlignment});
  }
  template <typename U>
  bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};

template <typename T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace shardfeed

#endif  // SHARDFEED_READER_ALIGNED_HOST_MEMORY_H_
