// Kernels written once, run by nvcc on a GPU or as a host loop by the
// emulated runtime (gpu/emu/).
//
// Each kernel's per-thread work is one SHARDFEED_HOST_DEVICE function taking
// a KernelThread (its block/thread coordinates) first; the __global__ kernel
// only forwards its built-in coordinates to it, and SHARDFEED_HOST_KERNEL
// registers the pair:
//
//   SHARDFEED_HOST_DEVICE inline void FillThread(const KernelThread& t, char* dst, size_t n) {
//     for (size_t i = t.global_x(); i < n; i += t.stride_x()) dst[i] = 0;
//   }
//   __global__ void Fill(char* dst, size_t n) { FillThread(KernelThread::Current(), dst, n); }
//   SHARDFEED_HOST_KERNEL(Fill, FillThread);
//
// Launches stay ordinary `<<<grid, block, 0, stream>>>` code. The real
// runtime ignores the registry (it is a table nobody reads); the emulated
// runtime's cudaLaunchKernel finds the host function by the kernel's host
// stub and runs every thread of the grid, block by block, on the stream's
// thread. One source of truth for the arithmetic and the indexing.
//
// Arguments: copied when the launch is queued (as the real runtime does);
// top-level pointer arguments into emulated device memory are translated
// to the emulator's host view of that memory (a pointer stored inside a
// struct argument or in device memory is not, so kernels take device
// pointers as direct arguments). A `const T*` argument is recorded as a
// read of its allocation, a `T*` as a write, for the emulator's race check.
//
// Thread-safety: registration happens during static initialization;
// FindHostKernel may be called from any thread afterwards.
#ifndef SHARDFEED_GPU_HOST_KERNEL_H_
#define SHARDFEED_GPU_HOST_KERNEL_H_

#include <vector_types.h>

#include <cstdint>

#include "gpu/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#endif

namespace shardfeed::gpu {

// The coordinates of one CUDA thread (what blockIdx, blockDim, threadIdx and
// gridDim say inside a kernel).
struct KernelThread {
  uint3 block;        // blockIdx
  dim3 block_dim;     // blockDim
  uint3 thread;       // threadIdx
  dim3 grid_dim;      // gridDim

  // The usual 1D grid-stride loop: first index and stride, 64-bit.
  SHARDFEED_HOST_DEVICE int64_t global_x() const {
    return static_cast<int64_t>(block.x) * block_dim.x + thread.x;
  }
  SHARDFEED_HOST_DEVICE int64_t stride_x() const {
    return static_cast<int64_t>(grid_dim.x) * block_dim.x;
  }
#if defined(__CUDACC__)
  __device__ static KernelThread Current() {
    return KernelThread{blockIdx, blockDim, threadIdx, gridDim};
  }
#endif
};

#if !defined(__CUDA_ARCH__)

// One queued launch of a host kernel: runs the whole grid when called.
using HostGrid = std::function<void()>;

// What a launch touches in emulated device memory: each pointer argument,
// and whether the kernel may write through it.
struct KernelPointerArg {
  const void* pointer;
  bool written;
};

// Maps a device pointer to the address the emulator's host code may use
// (returns its argument for any other pointer).
using TranslatePointer = std::function<void*(const void*)>;

// Builds the HostGrid of one launch from cudaLaunchKernel's `args` (one
// pointer per kernel parameter).
using HostKernelFactory = HostGrid (*)(void** args, dim3 grid, dim3 block,
                                       const TranslatePointer& translate);
using HostKernelPointers = std::vector<KernelPointerArg> (*)(void** args);

struct HostKernel {
  const char* name;
  HostKernelFactory make;
  HostKernelPointers pointers;
};

// Registers `kernel` for the host stub `stub` (a __global__ function's
// address in host code). Returns true (for static initializers).
bool RegisterHostKernel(const void* stub, HostKernel kernel);
// The registered kernel, or null.
const HostKernel* FindHostKernel(const void* stub);

namespace host_kernel_internal {

template <typename T>
T Translated(T value, const TranslatePointer& translate) {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<T>(translate(static_cast<const void*>(value)));
  } else {
    return value;
  }
}

template <typename F>
struct Signature;
template <typename... A>
struct Signature<void (*)(const KernelThread&, A...)> {
  using Args = std::tuple<std::decay_t<A>...>;
};

template <auto ThreadFn>
struct GridRunner {
  using Args = typename Signature<decltype(ThreadFn)>::Args;

  template <size_t... I>
  static Args Copy(void** args, const TranslatePointer& translate, std::index_sequence<I...>) {
    return Args(Translated(*static_cast<std::tuple_element_t<I, Args>*>(args[I]), translate)...);
  }

  static HostGrid Make(void** args, dim3 grid, dim3 block, const TranslatePointer& translate) {
    Args copied = Copy(args, translate, std::make_index_sequence<std::tuple_size_v<Args>>());
    return [copied, grid, block] {
      KernelThread t{};
      t.block_dim = block;
      t.grid_dim = grid;
      for (t.block.z = 0; t.block.z < grid.z; ++t.block.z) {
        for (t.block.y = 0; t.block.y < grid.y; ++t.block.y) {
          for (t.block.x = 0; t.block.x < grid.x; ++t.block.x) {
            for (t.thread.z = 0; t.thread.z < block.z; ++t.thread.z) {
              for (t.thread.y = 0; t.thread.y < block.y; ++t.thread.y) {
                for (t.thread.x = 0; t.thread.x < block.x; ++t.thread.x) {
                  std::apply([&t](const auto&... a) { ThreadFn(t, a...); }, copied);
                }
              }
            }
          }
        }
      }
    };
  }

  template <size_t... I>
  static std::vector<KernelPointerArg> PointersOf(void** args, std::index_sequence<I...>) {
    std::vector<KernelPointerArg> out;
    (Add<std::tuple_element_t<I, Args>>(args[I], &out), ...);
    return out;
  }
  template <typename T>
  static void Add(void* arg, std::vector<KernelPointerArg>* out) {
    if constexpr (std::is_pointer_v<T>) {
      out->push_back({*static_cast<T*>(arg), !std::is_const_v<std::remove_pointer_t<T>>});
    }
  }
  static std::vector<KernelPointerArg> Pointers(void** args) {
    return PointersOf(args, std::make_index_sequence<std::tuple_size_v<Args>>());
  }
};

}  // namespace host_kernel_internal

#define SHARDFEED_HOST_KERNEL_CONCAT2(a, b) a##b
#define SHARDFEED_HOST_KERNEL_CONCAT(a, b) SHARDFEED_HOST_KERNEL_CONCAT2(a, b)
// Registers the host version of `kernel` (a __global__ function or one
// instantiation of a template) whose per-thread work is `thread_fn`.
#define SHARDFEED_HOST_KERNEL(kernel, thread_fn)                                         \
  [[maybe_unused]] static const bool SHARDFEED_HOST_KERNEL_CONCAT(                       \
      shardfeed_host_kernel_registered_, __LINE__) =                                     \
      ::shardfeed::gpu::RegisterHostKernel(                                              \
          reinterpret_cast<const void*>(&kernel),                                        \
          ::shardfeed::gpu::HostKernel{                                                  \
              #kernel, &::shardfeed::gpu::host_kernel_internal::GridRunner<&thread_fn>::Make, \
              &::shardfeed::gpu::host_kernel_internal::GridRunner<&thread_fn>::Pointers})

#else  // defined(__CUDA_ARCH__): nvcc's device pass has no registry.
#define SHARDFEED_HOST_KERNEL(kernel, thread_fn) static_assert(true, "")
#endif  // !defined(__CUDA_ARCH__)

}  // namespace shardfeed::gpu

#endif  // SHARDFEED_GPU_HOST_KERNEL_H_
