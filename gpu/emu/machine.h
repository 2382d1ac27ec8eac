// The emulated machine behind gpu/emu's CUDA entry points: devices and
// contexts, streams with one worker thread each, events, device memory and
// the happens-before bookkeeping of the race check. Internal to gpu/emu/.
//
// Ordering model (the CUDA programming guide's "Streams" and the runtime
// API's "API synchronization behavior"): each queued operation waits for
// the previous one on its stream and for the (stream, sequence number)
// pairs in `waits`: an op on a device's legacy default stream waits for
// all work queued so far on the device's blocking streams, and an op on a
// blocking stream waits for the legacy stream's queued work; non-blocking
// streams wait for nothing implicit. Events record a marker op.
//
// Happens-before: every op carries a vector clock (one entry per stream):
// its stream's previous op, the ops it waits for, and everything the host
// has observed finished (synchronize calls, successful queries) precede it.
// Two ops touching one allocation, at least one writing, neither preceding
// the other, are a race (gpu/emu/race_check.h).
//
// Threading: one mutex (`mu`) guards all of it; worker threads run ops
// without it. Objects are never freed while the process runs (streams and
// events are marked destroyed), so a handle stays checkable.
#ifndef SHARDFEED_GPU_EMU_MACHINE_H_
#define SHARDFEED_GPU_EMU_MACHINE_H_

#include <cuda_runtime_api.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu/emu/emu_control.h"

namespace shardfeed::gpu::emu {

constexpr int kMaxDevices = 8;

class VectorClock {
 public:
  uint64_t Get(int stream) const {
    return stream < static_cast<int>(t_.size()) ? t_[stream] : 0;
  }
  void Set(int stream, uint64_t v) {
    if (stream >= static_cast<int>(t_.size())) t_.resize(stream + 1, 0);
    t_[stream] = v;
  }
  void Join(const VectorClock& o) {
    if (o.t_.size() > t_.size()) t_.resize(o.t_.size(), 0);
    for (size_t i = 0; i < o.t_.size(); ++i) t_[i] = std::max(t_[i], o.t_[i]);
  }

 private:
  std::vector<uint64_t> t_;
};

struct Stream;

// One unit of queued work.
struct Op {
  uint64_t seq = 0;
  std::vector<std::pair<Stream*, uint64_t>> waits;
  std::function<void()> run;  // on the stream's thread, without mu
  int64_t delay_us = 0;       // chaos
};

struct Stream {
  int id = 0;  // index into vector clocks
  int device = 0;
  bool blocking = true;  // false: cudaStreamNonBlocking
  bool legacy = false;   // the device's legacy default stream
  bool destroyed = false;
  std::string name;      // for messages
  std::deque<Op> queue;
  uint64_t enqueued = 0, completed = 0;
  VectorClock clock;  // of the last op queued
};

struct Event {
  int device = 0;
  bool timing = true;
  bool destroyed = false;
  Stream* stream = nullptr;  // of the last record; null: never recorded
  uint64_t seq = 0;
  VectorClock clock;
  std::shared_ptr<double> stamp;  // seconds, set when the marker runs (< 0 before)
};

struct Context {
  int device = 0;
  bool primary = true;
  bool destroyed = false;
};

// One access of a queued op to an allocation (the race check).
struct Access {
  int stream = 0;
  uint64_t seq = 0;
  bool write = false;
  std::string what;
};

struct Allocation {
  char* ptr = nullptr;      // the device pointer handed out (PROT_NONE)
  size_t size = 0;
  char* reserve = nullptr;  // the PROT_NONE reservation holding ptr
  char* alias = nullptr;    // the readable mapping, same layout as reserve
  size_t reserve_bytes = 0;
  int device = 0;
  std::vector<Access> accesses;  // the latest read and write per stream
};

struct PinnedRange {
  char* ptr = nullptr;
  size_t size = 0;
};

struct Device {
  Context primary;
  bool primary_created = false;
  uint64_t binds = 0;
  size_t used = 0;
  Stream* legacy = nullptr;
};

class Machine {
 public:
  static Machine& Get();

  std::mutex mu;
  std::condition_variable cv;

  // ---- Everything below: with mu held. ----
  Config config;
  Device devices[kMaxDevices];
  std::vector<std::unique_ptr<Stream>> streams;  // every stream ever made
  std::set<Stream*> live_streams;                // user streams not destroyed
  std::set<Event*> events;                       // not destroyed
  std::vector<std::unique_ptr<Event>> all_events;
  std::map<uintptr_t, Allocation> allocations;   // by ptr
  std::map<uintptr_t, PinnedRange> pinned;       // by ptr
  std::map<std::pair<std::thread::id, int>, Stream*> per_thread_streams;
  VectorClock host;  // what the host has observed finished
  std::atomic<uint64_t> races{0};
  std::mt19937_64 chaos;

  // cudaErrorNoDevice / the configured init error, or cudaSuccess.
  cudaError_t InitErrorLocked() const;
  // Makes a context current on this thread if it has none; its device.
  cudaError_t EnsureContextLocked(int* device);
  // The device the calling thread's runtime calls use (no context made).
  int CurrentDeviceLocked() const;
  void BindPrimaryLocked(int device);

  // A new stream (its worker thread starts).
  Stream* NewStreamLocked(int device, bool blocking, bool legacy, const std::string& name);
  // The stream a handle names for `device` (0, cudaStreamLegacy,
  // cudaStreamPerThread, or a created stream); null for a bad handle.
  Stream* ResolveLocked(cudaStream_t handle, int device);
  // Queues `run` on `s` after `extra_waits`; returns the op's clock in *clock
  // (for the race check) and its sequence number.
  uint64_t EnqueueLocked(Stream* s, std::function<void()> run,
                         const std::vector<std::pair<Stream*, uint64_t>>& extra_waits,
                         const VectorClock* extra_clock, VectorClock* clock);
  // Blocks (releasing mu) until op `seq` of `s` ran; the host then knows
  // `clock` finished.
  void WaitLocked(std::unique_lock<std::mutex>* lock, Stream* s, uint64_t seq,
                  const VectorClock& clock);
  // Waits for every op queued so far on `device` (-1: every device).
  void SynchronizeDeviceLocked(std::unique_lock<std::mutex>* lock, int device);

  // The allocation containing [p, p + n), or null.
  Allocation* FindAllocationLocked(const void* p, size_t n = 1);
  bool IsPinnedLocked(const void* p, size_t n);
  // The emulator's address for device pointer p (p itself otherwise).
  void* TranslateLocked(const void* p);

 private:
  Machine();
  void Work(Stream* s);
};

// The prologue of every runtime call that needs a device: refuses calls
// from host callbacks, locks the machine, makes a context current. When
// `error` is not cudaSuccess the call returns SetLastError(error).
struct DeviceCall {
  explicit DeviceCall(const char* api);
  Machine& m;
  std::unique_lock<std::mutex> lock;
  int device = 0;
  cudaError_t error = cudaSuccess;
  // The stream `handle` names on the current device; null (and error set to
  // cudaErrorInvalidResourceHandle) for a bad handle.
  Stream* StreamOf(cudaStream_t handle);
};

// Stream capture (capture_api.cc), with mu held: cudaErrorStreamCapture-
// Unsupported when an active capture forbids the calling thread's
// potentially unsafe call (an allocation, a free, a synchronize or query):
// by CUDA's rules for the thread's mode (cudaThreadExchangeStreamCaptureMode)
// and the captures' modes. `whole_device`: a device-wide synchronize, which
// any capture on `device` forbids whatever the modes. A refused call
// invalidates the captures that forbade it, as CUDA does. Errors only:
// work queued on a capturing stream still runs (graphs are not modelled).
cudaError_t CaptureForbidsLocked(int device, bool whole_device);

// The per-thread side: last error, current context, host-callback flag.
cudaError_t SetLastError(cudaError_t e);  // returns e
cudaError_t TakeLastError();
cudaError_t PeekLastError();
Context* ThreadContext();
void SetThreadContext(Context* c);
int ThreadDevice();
void SetThreadDevice(int device);
bool InHostCallback();
void SetInHostCallback(bool in);

// "0x7f..." for messages.
std::string Hex(const void* p);

// Prints "cuda_emu: <message>" and aborts.
[[noreturn]] void Fatal(const std::string& message);
// Called on every API entry: aborts inside a cudaLaunchHostFunc callback.
void CheckApiCall(const char* api);

}  // namespace shardfeed::gpu::emu

#endif  // SHARDFEED_GPU_EMU_MACHINE_H_
