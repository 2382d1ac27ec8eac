// Emulated CUDA runtime: devices, versions, the current device, the
// per-thread last error, and the driver entry points shardfeed asks for
// (contexts: cuCtxGetCurrent/SetCurrent/Create/Destroy/Push/Pop).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpu/emu/emu_control.h"
#include "gpu/emu/machine.h"

using shardfeed::gpu::emu::CheckApiCall;
using shardfeed::gpu::emu::DeviceCall;
using shardfeed::gpu::emu::Context;
using shardfeed::gpu::emu::Machine;
using shardfeed::gpu::emu::SetLastError;

cudaError_t cudaGetDeviceCount(int* count) {
  CheckApiCall("cudaGetDeviceCount");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  *count = 0;
  if (cudaError_t e = m.InitErrorLocked(); e != cudaSuccess) return SetLastError(e);
  *count = m.config.devices;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  CheckApiCall("cudaGetDeviceProperties");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  if (cudaError_t e = m.InitErrorLocked(); e != cudaSuccess) return SetLastError(e);
  if (device < 0 || device >= m.config.devices) return SetLastError(cudaErrorInvalidDevice);
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "shardfeed emulated GPU (cuda_emu)");
  prop->totalGlobalMem = m.config.memory_bytes;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 4;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->sharedMemPerBlock = 48 << 10;
  prop->unifiedAddressing = 1;
  prop->pciDeviceID = device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  CheckApiCall("cudaSetDevice");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  if (cudaError_t e = m.InitErrorLocked(); e != cudaSuccess) return SetLastError(e);
  if (device < 0 || device >= m.config.devices) return SetLastError(cudaErrorInvalidDevice);
  // As CUDA >= 12: the device's primary context is created and made
  // current (replacing whatever context the thread had).
  m.BindPrimaryLocked(device);
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  CheckApiCall("cudaGetDevice");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  if (cudaError_t e = m.InitErrorLocked(); e != cudaSuccess) return SetLastError(e);
  *device = m.CurrentDeviceLocked();
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  CheckApiCall("cudaDriverGetVersion");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  *version = m.config.driver_version;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() { return shardfeed::gpu::emu::TakeLastError(); }
cudaError_t cudaPeekAtLastError() { return shardfeed::gpu::emu::PeekLastError(); }

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  DeviceCall call("cudaMemGetInfo");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  *total = m.config.memory_bytes;
  *free_bytes = m.config.memory_bytes - m.devices[device].used;
  return cudaSuccess;
}

// ---- Driver API through cudaGetDriverEntryPointByVersion. ----
namespace {

// The thread's context stack below the current context (cuCtxPushCurrent).
thread_local std::vector<Context*> t_context_stack;

Context* AsContext(CUcontext c) { return reinterpret_cast<Context*>(c); }

CUresult EmuCtxGetCurrent(CUcontext* pctx) {
  *pctx = reinterpret_cast<CUcontext>(shardfeed::gpu::emu::ThreadContext());
  return CUDA_SUCCESS;
}

CUresult EmuCtxSetCurrent(CUcontext ctx) {
  Context* c = AsContext(ctx);
  if (c != nullptr && c->destroyed) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  shardfeed::gpu::emu::SetThreadContext(c);
  if (c != nullptr) shardfeed::gpu::emu::SetThreadDevice(c->device);
  return CUDA_SUCCESS;
}

CUresult EmuCtxGetDevice(CUdevice* device) {
  Context* c = shardfeed::gpu::emu::ThreadContext();
  if (c == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = c->device;
  return CUDA_SUCCESS;
}

CUresult EmuCtxPushCurrent(CUcontext ctx) {
  t_context_stack.push_back(shardfeed::gpu::emu::ThreadContext());
  return EmuCtxSetCurrent(ctx);
}

CUresult EmuCtxPopCurrent(CUcontext* pctx) {
  if (pctx != nullptr) EmuCtxGetCurrent(pctx);
  Context* below = nullptr;
  if (!t_context_stack.empty()) {
    below = t_context_stack.back();
    t_context_stack.pop_back();
  }
  shardfeed::gpu::emu::SetThreadContext(below);
  return CUDA_SUCCESS;
}

// A user context (PyCUDA's cuCtxCreate), pushed as the current one.
CUresult EmuCtxCreate(CUcontext* pctx, CUctxCreateParams*, unsigned int, CUdevice device) {
  Machine& m = Machine::Get();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.InitErrorLocked() != cudaSuccess) return CUDA_ERROR_NOT_INITIALIZED;
    if (device < 0 || device >= m.config.devices) return CUDA_ERROR_INVALID_DEVICE;
  }
  // Kept until exit (a destroyed handle stays checkable), reachable from
  // this list so leak checkers do not count it.
  static std::mutex mu;
  static auto* user_contexts = new std::vector<std::unique_ptr<Context>>;
  Context* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    user_contexts->push_back(std::make_unique<Context>());
    c = user_contexts->back().get();
  }
  c->device = device;
  c->primary = false;
  *pctx = reinterpret_cast<CUcontext>(c);
  return EmuCtxPushCurrent(*pctx);
}

CUresult EmuCtxDestroy(CUcontext ctx) {
  Context* c = AsContext(ctx);
  if (c == nullptr || c->primary) return CUDA_ERROR_INVALID_CONTEXT;
  c->destroyed = true;
  if (shardfeed::gpu::emu::ThreadContext() == c) EmuCtxPopCurrent(nullptr);
  return CUDA_SUCCESS;
}

CUresult EmuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult EmuDeviceGet(CUdevice* device, int ordinal) {
  *device = ordinal;
  return CUDA_SUCCESS;
}

// Whether the device's primary context exists (never released here).
CUresult EmuDevicePrimaryCtxGetState(CUdevice device, unsigned int* flags, int* active) {
  if (flags != nullptr) *flags = 0;
  *active = shardfeed::gpu::emu::PrimaryContextCreated(device) ? 1 : 0;
  return CUDA_SUCCESS;
}

struct DriverEntry {
  const char* name;
  void* fn;
};

const DriverEntry kDriverEntries[] = {
    {"cuCtxGetCurrent", reinterpret_cast<void*>(&EmuCtxGetCurrent)},
    {"cuCtxSetCurrent", reinterpret_cast<void*>(&EmuCtxSetCurrent)},
    {"cuCtxGetDevice", reinterpret_cast<void*>(&EmuCtxGetDevice)},
    {"cuCtxPushCurrent", reinterpret_cast<void*>(&EmuCtxPushCurrent)},
    {"cuCtxPopCurrent", reinterpret_cast<void*>(&EmuCtxPopCurrent)},
    {"cuCtxCreate", reinterpret_cast<void*>(&EmuCtxCreate)},
    {"cuCtxDestroy", reinterpret_cast<void*>(&EmuCtxDestroy)},
    {"cuInit", reinterpret_cast<void*>(&EmuInit)},
    {"cuDeviceGet", reinterpret_cast<void*>(&EmuDeviceGet)},
    {"cuDevicePrimaryCtxGetState", reinterpret_cast<void*>(&EmuDevicePrimaryCtxGetState)},
};

}  // namespace

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** fn, unsigned int,
                                             unsigned long long,
                                             cudaDriverEntryPointQueryResult* status) {
  CheckApiCall("cudaGetDriverEntryPointByVersion");
  Machine& m = Machine::Get();
  {
    std::lock_guard<std::mutex> lock(m.mu);
    if (m.config.driver_version < 13000) return SetLastError(cudaErrorInsufficientDriver);
  }
  *fn = nullptr;
  for (const DriverEntry& e : kDriverEntries) {
    if (std::strcmp(e.name, symbol) == 0) {
      *fn = e.fn;
      if (status != nullptr) *status = cudaDriverEntryPointSuccess;
      return cudaSuccess;
    }
  }
  if (status != nullptr) *status = cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}
