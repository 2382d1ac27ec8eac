#include "reader/consumer_fence.h"

#include <utility>

namespace shardfeed {

ConsumerFence::~ConsumerFence() {
  if (ops_ == nullptr) return;
  for (const DeviceEvent& e : events_) ops_->DestroyEvent(e.event, e.device);
}

ConsumerFence::ConsumerFence(ConsumerFence&& o) noexcept
    : ops_(o.ops_), events_(std::move(o.events_)), pending_(o.pending_),
      sync_device_(o.sync_device_) {
  o.events_.clear();
  o.pending_ = 0;
}

void ConsumerFence::OnRelease(const ConsumerStreams& c) {
  if (ops_ == nullptr) return;
  if (!c.known) {
    sync_device_ = true;
    return;
  }
  for (void* stream : c.streams) {
    absl::StatusOr<int> device = ops_->StreamDevice(stream);
    if (!device.ok()) {
      sync_device_ = true;  // an invalid stream: what reads the slot is unknown
      continue;
    }
    // Every pooled event of another device is replaced, not just the first
    // (one of the wrong device cannot be recorded on this stream).
    while (pending_ < events_.size() && events_[pending_].device != *device) {
      ops_->DestroyEvent(events_[pending_].event, events_[pending_].device);
      events_.erase(events_.begin() + pending_);
    }
    if (pending_ == events_.size()) {
      absl::StatusOr<void*> e = ops_->CreateEvent(*device);
      if (!e.ok()) {
        sync_device_ = true;
        return;
      }
      events_.push_back({*e, *device});
    }
    if (!ops_->RecordEvent(events_[pending_].event, *device, stream).ok()) {
      sync_device_ = true;  // what the stream still does is unknown
      continue;
    }
    ++pending_;
  }
}

absl::Status ConsumerFence::BeforeReuse(void* copy_stream) {
  if (ops_ == nullptr) return absl::OkStatus();
  absl::Status status;
  if (sync_device_) {
    status = ops_->SynchronizeDevice();
  } else {
    for (size_t i = 0; i < pending_ && status.ok(); ++i) {
      status = ops_->StreamWaitEvent(copy_stream, events_[i].event);
    }
  }
  if (status.ok()) {
    pending_ = 0;
    sync_device_ = false;
  }
  return status;
}

}  // namespace shardfeed
