// Emulated CUDA runtime: device and pinned memory, copies and memsets, with
// the runtime's documented synchronization behavior ("API synchronization
// behavior"): cudaMemcpy from pageable memory to the device returns once
// the source is staged, before the device memory is written; device-to-
// device copies and memsets are asynchronous; copies to the host and from
// pinned memory are synchronous. The synchronous calls run on the current
// device's legacy default stream.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpu/emu/guarded_memory.h"
#include "gpu/emu/machine.h"
#include "gpu/emu/race_check.h"

using shardfeed::gpu::emu::Allocation;
using shardfeed::gpu::emu::CaptureForbidsLocked;
using shardfeed::gpu::emu::CheckApiCall;
using shardfeed::gpu::emu::DeviceCall;
using shardfeed::gpu::emu::Machine;
using shardfeed::gpu::emu::SetLastError;
using shardfeed::gpu::emu::Stream;
using shardfeed::gpu::emu::VectorClock;

namespace shardfeed::gpu::emu {
namespace {

enum class Sync { kAsync, kSyncToHost, kPageableStaged };

void Warn(const std::string& message) {
  const std::string line = absl::StrCat("cuda_emu: ", message, "\n");
  (void)!write(2, line.data(), line.size());
}

// Queues a copy (or memset when src is null) of n bytes on `s`. The caller
// checked the ranges. `sync` says when the call returns.
cudaError_t QueueCopyLocked(std::unique_lock<std::mutex>* lock, Machine& m, Stream* s, void* dst,
                            const void* src, int value, size_t n, const char* api, Sync sync) {
  Allocation* dst_alloc = m.FindAllocationLocked(dst, n);
  Allocation* src_alloc = src != nullptr ? m.FindAllocationLocked(src, n) : nullptr;
  char* dst_view = static_cast<char*>(m.TranslateLocked(dst));
  const std::string what = absl::StrCat(api, " of ", n, " bytes");
  std::function<void()> run;
  if (src == nullptr) {
    run = [dst_view, value, n] { std::memset(dst_view, value, n); };
  } else if (src_alloc != nullptr) {
    const char* src_view = static_cast<const char*>(m.TranslateLocked(src));
    run = [dst_view, src_view, n] { std::memmove(dst_view, src_view, n); };
  } else if (m.IsPinnedLocked(src, n) && dst_alloc != nullptr) {
    // Read when the copy runs, as DMA from pinned memory does; a host
    // write in between is the overwrite race.
    const uint64_t print = Fingerprint(src, n);
    run = [dst_view, src, n, print, what] {
      CheckSourceUnchanged(src, n, print, what);
      std::memcpy(dst_view, src, n);
    };
  } else if (dst_alloc != nullptr) {
    // Pageable source: staged now (the caller may reuse it on return).
    auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                      static_cast<const char*>(src) + n);
    run = [dst_view, staged] { std::memcpy(dst_view, staged->data(), staged->size()); };
  } else {
    run = [dst_view, src, n] { std::memmove(dst_view, src, n); };
  }
  VectorClock clock;
  const uint64_t seq = m.EnqueueLocked(s, std::move(run), {}, nullptr, &clock);
  if (dst_alloc != nullptr) RecordAccessLocked(&m, dst_alloc, *s, seq, clock, true, what);
  if (src_alloc != nullptr) RecordAccessLocked(&m, src_alloc, *s, seq, clock, false, what);
  if (sync == Sync::kSyncToHost) m.WaitLocked(lock, s, seq, clock);
  return cudaSuccess;
}

// Checks the copy's ranges against `kind`; sets *sync for cudaMemcpy.
cudaError_t CheckCopyLocked(Machine& m, void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                            const char* api) {
  const bool dst_dev = m.FindAllocationLocked(dst, 0) != nullptr;
  const bool src_dev = m.FindAllocationLocked(src, 0) != nullptr;
  if (kind == cudaMemcpyDefault) return cudaSuccess;
  const bool want_dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool want_src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (dst_dev != want_dst_dev || src_dev != want_src_dev) {
    Warn(absl::StrCat(api, ": direction ", static_cast<int>(kind), " does not match the pointers (",
                      dst_dev ? "device" : "host", " destination, ", src_dev ? "device" : "host",
                      " source)"));
    return cudaErrorInvalidValue;
  }
  if (dst_dev && m.FindAllocationLocked(dst, n) == nullptr) {
    Warn(absl::StrCat(api, ": writing ", n, " bytes at ", Hex(dst), " runs past its allocation"));
    return cudaErrorInvalidValue;
  }
  if (src_dev && m.FindAllocationLocked(src, n) == nullptr) {
    Warn(absl::StrCat(api, ": reading ", n, " bytes at ", Hex(src), " runs past its allocation"));
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace
}  // namespace shardfeed::gpu::emu

using shardfeed::gpu::emu::CheckCopyLocked;
using shardfeed::gpu::emu::QueueCopyLocked;
using shardfeed::gpu::emu::Sync;

cudaError_t cudaMalloc(void** ptr, size_t size) {
  DeviceCall call("cudaMalloc");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  *ptr = nullptr;
  if (size > m.config.memory_bytes - m.devices[device].used) {
    return SetLastError(cudaErrorMemoryAllocation);
  }
  Allocation a;
  if (!shardfeed::gpu::emu::MapDeviceMemory(size, device, &a)) {
    return SetLastError(cudaErrorMemoryAllocation);
  }
  m.devices[device].used += size;
  m.allocations[reinterpret_cast<uintptr_t>(a.ptr)] = a;
  *ptr = a.ptr;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  DeviceCall call("cudaFree");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  if (ptr == nullptr) return cudaSuccess;
  auto it = m.allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.allocations.end()) return SetLastError(cudaErrorInvalidValue);
  // cudaFree synchronizes the device: nothing queued still uses the memory.
  m.SynchronizeDeviceLocked(&call.lock, it->second.device);
  it = m.allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.allocations.end()) return SetLastError(cudaErrorInvalidValue);  // freed meanwhile
  const Allocation a = it->second;
  m.allocations.erase(it);
  m.devices[a.device].used -= a.size;
  shardfeed::gpu::emu::UnmapDeviceMemory(a);
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  DeviceCall call("cudaHostAlloc");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  void* p = shardfeed::gpu::emu::MapPinnedMemory(size);
  if (p == nullptr) return SetLastError(cudaErrorMemoryAllocation);
  m.pinned[reinterpret_cast<uintptr_t>(p)] = {static_cast<char*>(p), size == 0 ? 1 : size};
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, 0); }

cudaError_t cudaFreeHost(void* ptr) {
  CheckApiCall("cudaFreeHost");
  Machine& m = Machine::Get();
  std::unique_lock<std::mutex> lock(m.mu);
  if (ptr == nullptr) return cudaSuccess;
  if (cudaError_t e = CaptureForbidsLocked(-1, false); e != cudaSuccess) return SetLastError(e);
  auto it = m.pinned.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.pinned.end()) return SetLastError(cudaErrorInvalidValue);
  m.SynchronizeDeviceLocked(&lock, -1);  // as cudaFreeHost does
  it = m.pinned.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == m.pinned.end()) return SetLastError(cudaErrorInvalidValue);
  const size_t size = it->second.size;
  m.pinned.erase(it);
  shardfeed::gpu::emu::UnmapPinnedMemory(ptr, size);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  DeviceCall call("cudaMemcpyAsync");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  if (cudaError_t e = CheckCopyLocked(m, dst, src, n, kind, "cudaMemcpyAsync"); e != cudaSuccess) {
    return SetLastError(e);
  }
  if (n == 0) return cudaSuccess;
  // Into pageable host memory the copy completes before the call returns.
  const bool to_pageable = m.FindAllocationLocked(dst, 0) == nullptr && !m.IsPinnedLocked(dst, n);
  return QueueCopyLocked(&call.lock, m, s, dst, src, 0, n, "cudaMemcpyAsync",
                         to_pageable ? Sync::kSyncToHost : Sync::kAsync);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  DeviceCall call("cudaMemcpy");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  if (cudaError_t e = CheckCopyLocked(m, dst, src, n, kind, "cudaMemcpy"); e != cudaSuccess) {
    return SetLastError(e);
  }
  if (n == 0) return cudaSuccess;
  Stream* legacy = m.ResolveLocked(nullptr, device);
  const bool dst_dev = m.FindAllocationLocked(dst, 0) != nullptr;
  const bool src_dev = m.FindAllocationLocked(src, 0) != nullptr;
  Sync sync = Sync::kSyncToHost;
  if (dst_dev && src_dev) {
    sync = Sync::kAsync;  // device to device: no host synchronization
  } else if (dst_dev && !m.IsPinnedLocked(src, n)) {
    sync = Sync::kPageableStaged;  // returns once staged; the write lands later
    // "a stream sync is performed before the copy is initiated"
    m.WaitLocked(&call.lock, legacy, legacy->enqueued, legacy->clock);
  }
  return QueueCopyLocked(&call.lock, m, legacy, dst, src, 0, n, "cudaMemcpy", sync);
}

namespace {

cudaError_t Memset(void* dst, int value, size_t n, cudaStream_t stream, const char* api) {
  DeviceCall call(api);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  if (m.FindAllocationLocked(dst, n) == nullptr) {
    shardfeed::gpu::emu::Warn(absl::StrCat(api, ": ", n, " bytes at ", shardfeed::gpu::emu::Hex(dst),
                                           " are not inside one device allocation"));
    return SetLastError(cudaErrorInvalidValue);
  }
  if (n == 0) return cudaSuccess;
  // Asynchronous with respect to the host for device memory.
  return QueueCopyLocked(&call.lock, m, s, dst, nullptr, value, n, api, Sync::kAsync);
}

}  // namespace

cudaError_t cudaMemset(void* dst, int value, size_t n) {
  return Memset(dst, value, n, nullptr, "cudaMemset");
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t n, cudaStream_t stream) {
  return Memset(dst, value, n, stream, "cudaMemsetAsync");
}
