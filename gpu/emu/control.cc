// The knobs of gpu/emu/emu_control.h.
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "gpu/emu/emu_control.h"
#include "gpu/emu/machine.h"

namespace shardfeed::gpu::emu {

int ErrorFromName(const char* name);  // error_names.cc

namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

[[noreturn]] void BadEnv(const char* name, const char* value, const char* want) {
  Fatal(std::string(name) + "=" + value + ": want " + want);
}

size_t ParseBytes(const char* name, const char* v) {
  std::string s(v);
  size_t scale = 1;
  const char last = s.empty() ? '\0' : s.back();
  if (last == 'K' || last == 'k') scale = size_t{1} << 10;
  if (last == 'M' || last == 'm') scale = size_t{1} << 20;
  if (last == 'G' || last == 'g') scale = size_t{1} << 30;
  if (scale != 1) s.pop_back();
  uint64_t n = 0;
  if (!absl::SimpleAtoi(s, &n)) BadEnv(name, v, "a byte count such as 512M or 4G");
  return n * scale;
}

int ParseInt(const char* name, const char* v) {
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < 0) BadEnv(name, v, "a number >= 0");
  return n;
}

}  // namespace

Config ConfigFromEnvironment() {
  Config c;
  if (const char* v = Env("SHARDFEED_CUDA_EMU_DEVICES")) c.devices = ParseInt("SHARDFEED_CUDA_EMU_DEVICES", v);
  if (c.devices > kMaxDevices) BadEnv("SHARDFEED_CUDA_EMU_DEVICES", Env("SHARDFEED_CUDA_EMU_DEVICES"), "at most 8");
  if (const char* v = Env("SHARDFEED_CUDA_EMU_MEMORY")) c.memory_bytes = ParseBytes("SHARDFEED_CUDA_EMU_MEMORY", v);
  if (const char* v = Env("SHARDFEED_CUDA_EMU_DRIVER")) c.driver_version = ParseInt("SHARDFEED_CUDA_EMU_DRIVER", v);
  if (const char* v = Env("SHARDFEED_CUDA_EMU_INIT_ERROR")) {
    int e = ErrorFromName(v);
    if (e < 0 && !absl::SimpleAtoi(v, &e)) {
      BadEnv("SHARDFEED_CUDA_EMU_INIT_ERROR", v, "a cudaError_t name or number");
    }
    c.init_error = e;
  }
  if (const char* v = Env("SHARDFEED_CUDA_EMU_CHAOS")) {
    if (!absl::SimpleAtoi(v, &c.chaos_seed)) BadEnv("SHARDFEED_CUDA_EMU_CHAOS", v, "a seed");
  }
  if (const char* v = Env("SHARDFEED_CUDA_EMU_CHAOS_MAX_US")) {
    c.chaos_max_delay_us = ParseInt("SHARDFEED_CUDA_EMU_CHAOS_MAX_US", v);
  }
  if (const char* v = Env("SHARDFEED_CUDA_EMU_RACES")) {
    if (std::strcmp(v, "abort") == 0) {
      c.races = RaceMode::kAbort;
    } else if (std::strcmp(v, "count") == 0) {
      c.races = RaceMode::kCount;
    } else if (std::strcmp(v, "off") == 0) {
      c.races = RaceMode::kOff;
    } else {
      BadEnv("SHARDFEED_CUDA_EMU_RACES", v, "abort, count or off");
    }
  }
  return c;
}

Config CurrentConfig() {
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  return m.config;
}

bool Configure(const Config& config) {
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  if (!m.live_streams.empty() || !m.events.empty() || !m.allocations.empty()) return false;
  if (config.devices < 0 || config.devices > kMaxDevices) return false;
  m.config = config;
  m.chaos.seed(config.chaos_seed);
  for (Device& d : m.devices) {
    d.primary_created = false;
    d.binds = 0;
    d.used = 0;
  }
  SetThreadContext(nullptr);
  SetThreadDevice(0);
  (void)TakeLastError();
  return true;
}

bool PrimaryContextCreated(int device) {
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  return device >= 0 && device < kMaxDevices && m.devices[device].primary_created;
}

uint64_t PrimaryContextBinds(int device) {
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  return device >= 0 && device < kMaxDevices ? m.devices[device].binds : 0;
}

uint64_t RaceCount() { return Machine::Get().races.load(); }

size_t DeviceMemoryUsed(int device) {
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  return device >= 0 && device < kMaxDevices ? m.devices[device].used : 0;
}

void DrainAllStreams() {
  Machine& m = Machine::Get();
  std::unique_lock<std::mutex> lock(m.mu);
  m.SynchronizeDeviceLocked(&lock, -1);
}

}  // namespace shardfeed::gpu::emu
