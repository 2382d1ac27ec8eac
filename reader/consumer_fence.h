// ConsumerFence: when may a ring slot's device memory be refilled after its
// batch was handed back? The pure logic, testable without a GPU: the CUDA
// calls go through GpuOps (CudaOps in device_context.h; a fake in tests).
//
// Release with the consumer's streams (any number, stream 0 included: it is
// the legacy default stream, a real stream): an event is recorded on each,
// and the copy stream waits for all of them before refilling. A Batch
// released or destroyed with no stream is a release on stream 0 (the
// legacy default stream, whose event also follows the work queued before
// it on every blocking stream, the per-thread default streams included):
// capture-safe, unlike a device-wide synchronize, which is illegal (and
// invalidates the capture) while any stream of the device captures a CUDA
// graph (torch.cuda.graph). Unknown consumers (ConsumerStreams::Unknown():
// Python's __dlpack__() with no stream, as TensorFlow calls it, reading on
// its own non-blocking stream), or a stream that cannot be fenced (an
// invalid handle, an event that fails to record): the refill first waits
// for the whole device (conservative; not capture-safe).
//
// Threading: OnRelease and BeforeReuse are called under the ring's lock or
// by the one thread that owns the slot; the class itself is not locked.
#ifndef SHARDFEED_READER_CONSUMER_FENCE_H_
#define SHARDFEED_READER_CONSUMER_FENCE_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shardfeed {

// The streams whose queued work reads a released batch. known = false: the
// consumer's streams are unknown (work may be queued anywhere).
struct ConsumerStreams {
  bool known = false;
  std::vector<void*> streams;  // cudaStream_t; nullptr is stream 0
  static ConsumerStreams Unknown() { return {}; }
  static ConsumerStreams Of(std::vector<void*> s) { return {true, std::move(s)}; }
};

// The few CUDA calls the fence makes (events are cudaEvent_t, streams
// cudaStream_t, as void*). Implementations are thread-safe. A consumer's
// stream may belong to another device than the loader's: its fence event is
// created on the stream's device (cudaEventRecord needs both on one device;
// cudaStreamWaitEvent takes an event of any device).
class GpuOps {
 public:
  virtual ~GpuOps() = default;
  // The device of `stream` (stream 0, cudaStreamLegacy and
  // cudaStreamPerThread: the loader's device, the batch's, whatever device
  // is current on the calling thread).
  virtual absl::StatusOr<int> StreamDevice(void* stream) = 0;
  virtual absl::StatusOr<void*> CreateEvent(int device) = 0;
  virtual void DestroyEvent(void* event, int device) = 0;
  virtual absl::Status RecordEvent(void* event, int device, void* stream) = 0;
  virtual absl::Status StreamWaitEvent(void* stream, void* event) = 0;
  virtual absl::Status SynchronizeDevice() = 0;
};

class ConsumerFence {
 public:
  explicit ConsumerFence(GpuOps* ops) : ops_(ops) {}  // ops: null on the host path
  ~ConsumerFence();
  ConsumerFence(ConsumerFence&& o) noexcept;
  ConsumerFence& operator=(ConsumerFence&&) = delete;
  ConsumerFence(const ConsumerFence&) = delete;

  // The batch in the slot was handed back by a consumer using `c` (may be
  // called several times before a reuse: the events add up).
  void OnRelease(const ConsumerStreams& c);
  // Before the slot is refilled by work queued on `copy_stream`: that stream
  // waits for every consumer event, or the device is synchronized. Clears
  // the fence.
  absl::Status BeforeReuse(void* copy_stream);

  bool must_sync_device() const { return sync_device_; }
  size_t pending_events() const { return pending_; }

 private:
  struct DeviceEvent {
    void* event;
    int device;
  };
  GpuOps* ops_;
  std::vector<DeviceEvent> events_;  // grown on demand, reused (recreated for another device)
  size_t pending_ = 0;         // events_[0, pending_) recorded since the last reuse
  bool sync_device_ = false;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_CONSUMER_FENCE_H_
