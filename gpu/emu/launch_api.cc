// Emulated CUDA runtime: what nvcc's generated host code calls (fat binary
// and kernel registration, the <<<>>> call configuration, the launch) and
// cudaLaunchKernel. A launch runs the kernel's registered host version
// (gpu/host_kernel.h) over the whole grid on the stream's thread.
#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpu/emu/machine.h"
#include "gpu/emu/race_check.h"
#include "gpu/host_kernel.h"

using shardfeed::gpu::emu::Allocation;
using shardfeed::gpu::emu::Fatal;
using shardfeed::gpu::emu::Machine;
using shardfeed::gpu::emu::SetLastError;
using shardfeed::gpu::emu::Stream;
using shardfeed::gpu::emu::VectorClock;

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared_mem;
  cudaStream_t stream;
};
thread_local std::vector<CallConfiguration> t_call_configurations;

// Device function names by host stub, for messages.
std::map<const void*, std::string>& KernelNames() {
  static auto* names = new std::map<const void*, std::string>;
  return *names;
}
std::mutex g_names_mu;

std::string KernelName(const void* stub) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  auto it = KernelNames().find(stub);
  return it != KernelNames().end() ? it->second : absl::StrCat("kernel at ", shardfeed::gpu::emu::Hex(stub));
}

bool ValidConfiguration(dim3 grid, dim3 block) {
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0) {
    return false;
  }
  if (grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) return false;
  if (block.x > 1024 || block.y > 1024 || block.z > 64) return false;
  return uint64_t{block.x} * block.y * block.z <= 1024;
}

cudaError_t Launch(const void* stub, dim3 grid, dim3 block, void** args, size_t shared_mem,
                   cudaStream_t stream) {
  const shardfeed::gpu::HostKernel* kernel = shardfeed::gpu::FindHostKernel(stub);
  if (kernel == nullptr) {
    Fatal(absl::StrCat("launch of ", KernelName(stub),
                       ", which has no host version: register it with SHARDFEED_HOST_KERNEL "
                       "(gpu/host_kernel.h)"));
  }
  shardfeed::gpu::emu::DeviceCall call("cudaLaunchKernel");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  if (!ValidConfiguration(grid, block) || shared_mem > (48 << 10)) {
    return SetLastError(cudaErrorInvalidConfiguration);
  }
  Stream* s = call.StreamOf(stream);
  // A kernel runs on the current device; a stream of another one is an error.
  if (s == nullptr || s->device != call.device) {
    return SetLastError(cudaErrorInvalidResourceHandle);
  }
  const std::string what = absl::StrCat("kernel ", kernel->name);
  std::vector<std::pair<Allocation*, bool>> touched;
  int index = 0;
  for (const shardfeed::gpu::KernelPointerArg& p : kernel->pointers(args)) {
    ++index;
    if (p.pointer == nullptr) continue;
    Allocation* a = m.FindAllocationLocked(p.pointer, 0);
    if (a == nullptr) {
      if (m.IsPinnedLocked(p.pointer, 1)) continue;  // mapped pinned memory: reachable
      Fatal(absl::StrCat(what, ": pointer argument ", index, " (", shardfeed::gpu::emu::Hex(p.pointer),
                         ") is host memory, which a GPU kernel cannot read"));
    }
    touched.push_back({a, p.written});
  }
  shardfeed::gpu::HostGrid run =
      kernel->make(args, grid, block, [&m](const void* p) { return m.TranslateLocked(p); });
  VectorClock clock;
  const uint64_t seq = m.EnqueueLocked(s, std::move(run), {}, nullptr, &clock);
  for (const auto& t : touched) {
    shardfeed::gpu::emu::RecordAccessLocked(&m, t.first, *s, seq, clock, t.second, what);
  }
  return cudaSuccess;
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) {
  static void* handle_storage = nullptr;
  (void)fat_cubin;
  return &handle_storage;
}

void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}

void __cudaRegisterFunction(void**, const char* host_fun, char*, const char* device_name, int,
                            uint3*, uint3*, dim3*, dim3*, int*) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  KernelNames()[host_fun] = device_name;
}

void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared_mem,
                                     struct CUstream_st* stream) {
  t_call_configurations.push_back({grid, block, shared_mem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared_mem,
                                       void* stream) {
  if (t_call_configurations.empty()) return cudaErrorInvalidConfiguration;
  const CallConfiguration c = t_call_configurations.back();
  t_call_configurations.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared_mem = c.shared_mem;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* fun) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                               size_t shared_mem, cudaStream_t stream) {
  return Launch(reinterpret_cast<const void*>(kernel), grid, block, args, shared_mem, stream);
}

}  // extern "C"

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                             size_t shared_mem, cudaStream_t stream) {
  return Launch(func, grid, block, args, shared_mem, stream);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return Launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                config->stream);
}
