// The emulated CUDA runtime's knobs: what a test may set, and what it may
// observe, in a binary linked against //gpu/emu:cudart instead of
// libcudart_static (see gpu/emu/BUILD for how a test selects it).
//
// The emulated machine: `devices` GPUs ("shardfeed emulated GPU", compute
// capability 9.0), each with `memory_bytes` of device memory and a legacy
// default stream. Every stream runs its queued work in order on its own
// thread, asynchronously to the host. Device pointers point at PROT_NONE
// pages: host code that dereferences one dies with
//   "cuda_emu: host code touched emulated device memory at 0x..."
// Emulated copies and kernels reach the memory through a second mapping.
//
// Environment (read once, at the first CUDA call; Configure() overrides):
//   SHARDFEED_CUDA_EMU_DEVICES=2        device count; 0: cudaErrorNoDevice
//   SHARDFEED_CUDA_EMU_MEMORY=4G        device memory per device (K/M/G suffixes)
//   SHARDFEED_CUDA_EMU_DRIVER=13000     driver version; below 13000 every call
//                                       that needs a device fails with
//                                       cudaErrorInsufficientDriver
//   SHARDFEED_CUDA_EMU_INIT_ERROR=N     a cudaError_t (number or name, e.g.
//                                       cudaErrorDevicesUnavailable) that
//                                       device discovery and every call
//                                       needing a device return
//   SHARDFEED_CUDA_EMU_CHAOS=SEED       nonzero: a random delay (up to
//                                       SHARDFEED_CUDA_EMU_CHAOS_MAX_US, default
//                                       1000) before each queued operation
//   SHARDFEED_CUDA_EMU_RACES=abort      abort | count | off: what an unordered
//                                       pair of device operations on the same
//                                       allocation (one writing), or a host
//                                       write into pinned memory a queued copy
//                                       has not read yet, does
//
// Faults the emulator reports by aborting with a "cuda_emu:" message (a bug
// in the caller on a real GPU too): a race (above), a destroyed stream or
// event used, a CUDA call from inside a cudaLaunchHostFunc callback, a
// kernel launch with no host version registered (gpu/host_kernel.h).
//
// Thread-safety: every function here may be called from any thread;
// Configure() only while the emulator holds no stream, event or allocation.
#ifndef SHARDFEED_GPU_EMU_EMU_CONTROL_H_
#define SHARDFEED_GPU_EMU_EMU_CONTROL_H_

#include <cstddef>
#include <cstdint>

namespace shardfeed::gpu::emu {

enum class RaceMode { kAbort, kCount, kOff };

struct Config {
  int devices = 2;
  size_t memory_bytes = size_t{4} << 30;  // per device
  int driver_version = 13000;             // < 13000: cudaErrorInsufficientDriver
  int init_error = 0;                     // a cudaError_t; 0: none
  uint64_t chaos_seed = 0;                // 0: no delays
  int chaos_max_delay_us = 1000;
  RaceMode races = RaceMode::kAbort;
};

// The configuration from the environment (defaults above where unset).
Config ConfigFromEnvironment();
// The configuration in force.
Config CurrentConfig();
// Replaces the configuration and resets the devices (contexts, memory
// counters, the calling thread's current device and last error). Returns
// false, changing nothing, while streams, events or allocations live.
bool Configure(const Config& config);

// Whether device `device`'s primary context was ever created (by
// cudaSetDevice, or by a call needing a device on a thread with none).
bool PrimaryContextCreated(int device);
// How many times a thread made device `device`'s primary context current
// (cudaSetDevice, or implicitly): a thread that should never touch a device
// leaves this unchanged.
uint64_t PrimaryContextBinds(int device);

// Races found so far (RaceMode::kCount; also counted before aborting).
uint64_t RaceCount();
// Device memory allocated on `device` now, in bytes.
size_t DeviceMemoryUsed(int device);

// Blocks until every stream of every device has run all its queued work.
void DrainAllStreams();

}  // namespace shardfeed::gpu::emu

#endif  // SHARDFEED_GPU_EMU_EMU_CONTROL_H_
