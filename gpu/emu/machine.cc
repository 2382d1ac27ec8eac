#include "gpu/emu/machine.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace shardfeed::gpu::emu {
namespace {

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local Context* t_context = nullptr;
thread_local int t_device = 0;
thread_local bool t_in_host_callback = false;

}  // namespace

cudaError_t SetLastError(cudaError_t e) {
  if (e != cudaSuccess && e != cudaErrorNotReady) t_last_error = e;
  return e;
}
cudaError_t TakeLastError() {
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}
cudaError_t PeekLastError() { return t_last_error; }
Context* ThreadContext() { return t_context; }
void SetThreadContext(Context* c) { t_context = c; }
int ThreadDevice() { return t_device; }
void SetThreadDevice(int device) { t_device = device; }
bool InHostCallback() { return t_in_host_callback; }
void SetInHostCallback(bool in) { t_in_host_callback = in; }

std::string Hex(const void* p) { return absl::StrFormat("%p", p); }

void Fatal(const std::string& message) {
  const std::string line = absl::StrCat("cuda_emu: ", message, "\n");
  (void)!write(2, line.data(), line.size());
  std::abort();
}

void CheckApiCall(const char* api) {
  if (InHostCallback()) {
    Fatal(absl::StrCat(api, " called from a cudaLaunchHostFunc callback (CUDA calls are not "
                            "allowed there; a real GPU may deadlock)"));
  }
}

DeviceCall::DeviceCall(const char* api) : m(Machine::Get()) {
  CheckApiCall(api);
  lock = std::unique_lock<std::mutex>(m.mu);
  error = m.EnsureContextLocked(&device);
}

Stream* DeviceCall::StreamOf(cudaStream_t handle) {
  Stream* s = m.ResolveLocked(handle, device);
  if (s == nullptr) error = cudaErrorInvalidResourceHandle;
  return s;
}

Machine& Machine::Get() {
  static Machine* machine = new Machine;  // never destroyed: worker threads use it until exit
  return *machine;
}

Machine::Machine() {
  config = ConfigFromEnvironment();
  chaos.seed(config.chaos_seed);
  for (int d = 0; d < kMaxDevices; ++d) devices[d].primary.device = d;
}

cudaError_t Machine::InitErrorLocked() const {
  if (config.init_error != 0) return static_cast<cudaError_t>(config.init_error);
  if (config.driver_version < 13000) return cudaErrorInsufficientDriver;
  if (config.devices <= 0) return cudaErrorNoDevice;
  return cudaSuccess;
}

void Machine::BindPrimaryLocked(int device) {
  Device& d = devices[device];
  d.primary_created = true;
  ++d.binds;
  SetThreadContext(&d.primary);
  SetThreadDevice(device);
}

cudaError_t Machine::EnsureContextLocked(int* device) {
  if (cudaError_t e = InitErrorLocked(); e != cudaSuccess) return e;
  Context* c = ThreadContext();
  if (c == nullptr) {
    const int d = ThreadDevice();
    if (d < 0 || d >= config.devices) return cudaErrorInvalidDevice;
    BindPrimaryLocked(d);
    c = ThreadContext();
  }
  if (c->destroyed) return cudaErrorContextIsDestroyed;
  *device = c->device;
  return cudaSuccess;
}

int Machine::CurrentDeviceLocked() const {
  const Context* c = ThreadContext();
  return c != nullptr ? c->device : ThreadDevice();
}

Stream* Machine::NewStreamLocked(int device, bool blocking, bool legacy, const std::string& name) {
  auto s = std::make_unique<Stream>();
  s->id = static_cast<int>(streams.size());
  s->device = device;
  s->blocking = blocking;
  s->legacy = legacy;
  s->name = absl::StrCat(name, " #", s->id, " on device ", device);
  Stream* raw = s.get();
  streams.push_back(std::move(s));
  std::thread([this, raw] { Work(raw); }).detach();
  return raw;
}

Stream* Machine::ResolveLocked(cudaStream_t handle, int device) {
  if (handle == nullptr || handle == cudaStreamLegacy) {
    Device& d = devices[device];
    if (d.legacy == nullptr) {
      d.legacy = NewStreamLocked(device, /*blocking=*/true, /*legacy=*/true, "legacy default stream");
    }
    return d.legacy;
  }
  if (handle == cudaStreamPerThread) {
    Stream*& s = per_thread_streams[{std::this_thread::get_id(), device}];
    if (s == nullptr) {
      s = NewStreamLocked(device, /*blocking=*/true, false, "per-thread default stream");
    }
    return s;
  }
  Stream* s = reinterpret_cast<Stream*>(handle);
  for (const auto& known : streams) {
    if (known.get() == s) {
      if (s->destroyed) Fatal(absl::StrCat("use of destroyed stream ", s->name));
      return s;
    }
  }
  return nullptr;
}

uint64_t Machine::EnqueueLocked(Stream* s, std::function<void()> run,
                                const std::vector<std::pair<Stream*, uint64_t>>& extra_waits,
                                const VectorClock* extra_clock, VectorClock* clock) {
  Op op;
  op.run = std::move(run);
  op.waits = extra_waits;
  VectorClock vc = s->clock;
  vc.Join(host);
  if (extra_clock != nullptr) vc.Join(*extra_clock);
  // The legacy default stream and the blocking streams of its device wait
  // for each other's queued work.
  for (const auto& other : streams) {
    Stream* o = other.get();
    if (o == s || o->device != s->device || o->enqueued == 0) continue;
    const bool implicit = s->legacy ? (o->blocking && !o->legacy) : (s->blocking && o->legacy);
    if (!implicit) continue;
    op.waits.push_back({o, o->enqueued});
    vc.Join(o->clock);
  }
  op.seq = ++s->enqueued;
  vc.Set(s->id, op.seq);
  s->clock = vc;
  if (config.chaos_seed != 0 && config.chaos_max_delay_us > 0) {
    // Half the ops run at once, the others after up to the maximum delay.
    const uint64_t r = chaos();
    op.delay_us = (r & 1) ? static_cast<int64_t>((r >> 1) % config.chaos_max_delay_us) : 0;
  }
  s->queue.push_back(std::move(op));
  cv.notify_all();
  if (clock != nullptr) *clock = vc;
  return s->enqueued;
}

void Machine::Work(Stream* s) {
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    cv.wait(lock, [&] { return !s->queue.empty() || s->destroyed; });
    if (s->queue.empty()) return;  // destroyed and drained
    Op& op = s->queue.front();
    cv.wait(lock, [&] {
      for (const auto& w : op.waits) {
        if (w.first->completed < w.second) return false;
      }
      return true;
    });
    std::function<void()> run = std::move(op.run);
    const int64_t delay = op.delay_us;
    const uint64_t seq = op.seq;
    lock.unlock();
    if (delay > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    if (run) run();
    lock.lock();
    s->queue.pop_front();
    s->completed = seq;
    cv.notify_all();
  }
}

void Machine::WaitLocked(std::unique_lock<std::mutex>* lock, Stream* s, uint64_t seq,
                         const VectorClock& clock) {
  cv.wait(*lock, [&] { return s->completed >= seq; });
  host.Join(clock);
}

void Machine::SynchronizeDeviceLocked(std::unique_lock<std::mutex>* lock, int device) {
  std::vector<std::pair<Stream*, uint64_t>> targets;
  for (const auto& s : streams) {
    if (device < 0 || s->device == device) targets.push_back({s.get(), s->enqueued});
  }
  for (const auto& t : targets) {
    cv.wait(*lock, [&] { return t.first->completed >= t.second; });
    host.Join(t.first->clock);  // t.second may be older; the stream's clock covers it
  }
}

Allocation* Machine::FindAllocationLocked(const void* p, size_t n) {
  const auto u = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(u);
  if (it == allocations.begin()) return nullptr;
  --it;
  Allocation& a = it->second;
  const auto begin = reinterpret_cast<uintptr_t>(a.ptr);
  if (u < begin || u >= begin + std::max<size_t>(a.size, 1)) return nullptr;
  if (n > 0 && u + n > begin + a.size) return nullptr;
  return &a;
}

bool Machine::IsPinnedLocked(const void* p, size_t n) {
  const auto u = reinterpret_cast<uintptr_t>(p);
  auto it = pinned.upper_bound(u);
  if (it == pinned.begin()) return false;
  --it;
  const auto begin = reinterpret_cast<uintptr_t>(it->second.ptr);
  return u >= begin && u + n <= begin + it->second.size;
}

void* Machine::TranslateLocked(const void* p) {
  const auto u = reinterpret_cast<uintptr_t>(p);
  auto it = allocations.upper_bound(u);
  if (it != allocations.begin()) {
    --it;
    Allocation& a = it->second;
    const auto reserve = reinterpret_cast<uintptr_t>(a.reserve);
    if (u >= reserve && u < reserve + a.reserve_bytes) return a.alias + (u - reserve);
  }
  return const_cast<void*>(p);
}

}  // namespace shardfeed::gpu::emu
