// Emulated CUDA runtime: streams, events, host callbacks and the
// synchronize calls. Each stream's work runs in order on the stream's own
// thread (gpu/emu/machine.h for the ordering rules).
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gpu/emu/machine.h"

using shardfeed::gpu::emu::CaptureForbidsLocked;
using shardfeed::gpu::emu::CheckApiCall;
using shardfeed::gpu::emu::DeviceCall;
using shardfeed::gpu::emu::Event;
using shardfeed::gpu::emu::Fatal;
using shardfeed::gpu::emu::Machine;
using shardfeed::gpu::emu::SetLastError;
using shardfeed::gpu::emu::Stream;
using shardfeed::gpu::emu::VectorClock;

namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The live event a handle names; aborts on a destroyed or unknown one.
Event* EventOf(Machine& m, cudaEvent_t handle, const char* api) {
  auto* e = reinterpret_cast<Event*>(handle);
  if (m.events.count(e) == 0) {
    for (const auto& known : m.all_events) {
      if (known.get() == e) Fatal(absl::StrCat(api, " on a destroyed event"));
    }
    return nullptr;
  }
  return e;
}

}  // namespace

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  DeviceCall call("cudaStreamCreateWithFlags");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  const bool blocking = (flags & cudaStreamNonBlocking) == 0;
  Stream* s = m.NewStreamLocked(device, blocking, false,
                                blocking ? "blocking stream" : "non-blocking stream");
  m.live_streams.insert(s);
  *stream = reinterpret_cast<cudaStream_t>(s);
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  CheckApiCall("cudaStreamDestroy");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  auto* s = reinterpret_cast<Stream*>(stream);
  if (m.live_streams.count(s) == 0) {
    if (stream != nullptr) m.ResolveLocked(stream, 0);  // aborts on a destroyed one
    return SetLastError(cudaErrorInvalidResourceHandle);
  }
  // Work still queued runs; the worker then ends.
  m.live_streams.erase(s);
  s->destroyed = true;
  m.cv.notify_all();
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  DeviceCall call("cudaStreamSynchronize");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  m.WaitLocked(&call.lock, s, s->enqueued, s->clock);
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  DeviceCall call("cudaStreamQuery");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, false);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  if (s->completed < s->enqueued) return cudaErrorNotReady;
  m.host.Join(s->clock);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  DeviceCall call("cudaDeviceSynchronize");
  if (call.error == cudaSuccess) call.error = CaptureForbidsLocked(call.device, true);
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  m.SynchronizeDeviceLocked(&call.lock, device);
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* data) {
  DeviceCall call("cudaLaunchHostFunc");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  m.EnqueueLocked(
      s,
      [fn, data] {
        shardfeed::gpu::emu::SetInHostCallback(true);
        fn(data);
        shardfeed::gpu::emu::SetInHostCallback(false);
      },
      {}, nullptr, nullptr);
  return cudaSuccess;
}

// ---- Events ----

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  DeviceCall call("cudaEventCreateWithFlags");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  const int device = call.device;
  auto ev = std::make_unique<Event>();
  ev->device = device;
  ev->timing = (flags & cudaEventDisableTiming) == 0;
  *event = reinterpret_cast<cudaEvent_t>(ev.get());
  m.events.insert(ev.get());
  m.all_events.push_back(std::move(ev));
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  CheckApiCall("cudaEventDestroy");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  Event* e = EventOf(m, event, "cudaEventDestroy");
  if (e == nullptr) return SetLastError(cudaErrorInvalidResourceHandle);
  e->destroyed = true;
  m.events.erase(e);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  DeviceCall call("cudaEventRecord");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Event* e = EventOf(m, event, "cudaEventRecord");
  if (e == nullptr) return SetLastError(cudaErrorInvalidResourceHandle);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  // The event and the stream must belong to the same device.
  if (s->device != e->device) return SetLastError(cudaErrorInvalidResourceHandle);
  auto stamp = std::make_shared<double>(-1);
  e->seq = m.EnqueueLocked(s, [stamp] { *stamp = NowSeconds(); }, {}, nullptr, &e->clock);
  e->stream = s;
  e->stamp = stamp;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  CheckApiCall("cudaEventQuery");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  Event* e = EventOf(m, event, "cudaEventQuery");
  if (e == nullptr) return SetLastError(cudaErrorInvalidResourceHandle);
  if (cudaError_t c = CaptureForbidsLocked(e->device, false); c != cudaSuccess) return SetLastError(c);
  if (e->stream == nullptr) return cudaSuccess;
  if (e->stream->completed < e->seq) return cudaErrorNotReady;
  m.host.Join(e->clock);
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  CheckApiCall("cudaEventSynchronize");
  Machine& m = Machine::Get();
  std::unique_lock<std::mutex> lock(m.mu);
  Event* e = EventOf(m, event, "cudaEventSynchronize");
  if (e == nullptr) return SetLastError(cudaErrorInvalidResourceHandle);
  if (cudaError_t c = CaptureForbidsLocked(e->device, false); c != cudaSuccess) return SetLastError(c);
  if (e->stream == nullptr) return cudaSuccess;
  const VectorClock clock = e->clock;
  m.WaitLocked(&lock, e->stream, e->seq, clock);
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  CheckApiCall("cudaEventElapsedTime");
  Machine& m = Machine::Get();
  std::lock_guard<std::mutex> lock(m.mu);
  Event* a = EventOf(m, start, "cudaEventElapsedTime");
  Event* b = EventOf(m, end, "cudaEventElapsedTime");
  if (a == nullptr || b == nullptr || !a->timing || !b->timing || a->stream == nullptr ||
      b->stream == nullptr) {
    return SetLastError(cudaErrorInvalidResourceHandle);
  }
  if (a->stream->completed < a->seq || b->stream->completed < b->seq) return cudaErrorNotReady;
  *ms = static_cast<float>((*b->stamp - *a->stamp) * 1e3);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  DeviceCall call("cudaStreamWaitEvent");
  if (call.error != cudaSuccess) return SetLastError(call.error);
  Machine& m = call.m;
  Event* e = EventOf(m, event, "cudaStreamWaitEvent");
  if (e == nullptr) return SetLastError(cudaErrorInvalidResourceHandle);
  Stream* s = call.StreamOf(stream);
  if (s == nullptr) return SetLastError(call.error);
  if (e->stream == nullptr) return cudaSuccess;  // never recorded: nothing to wait for
  m.EnqueueLocked(s, nullptr, {{e->stream, e->seq}}, &e->clock, nullptr);
  return cudaSuccess;
}
