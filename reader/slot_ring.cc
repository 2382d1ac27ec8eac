#include "reader/slot_ring.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "gpu/cuda_status.h"
#include "gpu/device_guard.h"
#include "reader/feature_transforms.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

class SlotLease : public internal::BatchLease {
 public:
  SlotLease(std::shared_ptr<SlotRing> ring, int slot, Batch inner)
      : ring_(std::move(ring)), slot_(slot), inner_(std::move(inner)) {}
  void Release(const ConsumerStreams& consumers) override {
    if (ring_ == nullptr) return;
    ring_->Release(slot_, consumers);
    ring_.reset();
    if (consumers.known) {
      inner_.ReleaseAfter(consumers.streams);
    } else {
      inner_.ReleaseAfterDeviceIdle();
    }
  }
  void Fence(const ConsumerStreams& consumers) override {
    if (ring_ == nullptr) return;
    ring_->Fence(slot_, consumers);
    for (void* stream : consumers.streams) inner_.FenceAfter(stream);
  }
  ~SlotLease() override { Release(ConsumerStreams::Of({nullptr})); }  // as Batch::Release()

 private:
  std::shared_ptr<SlotRing> ring_;
  int slot_;
  Batch inner_;
};

}  // namespace

SlotLayout LayoutFor(const ResolvedOptions& r) {
  SlotLayout l;
  l.features = r.o.features;
  l.transforms = r.o.transforms;
  l.transform_of = r.transform_of;
  l.present.assign(l.features.size(), true);
  l.batch_size = r.o.batch_size;
  l.record_index = r.o.record_index;
  return l;
}

absl::StatusOr<std::shared_ptr<SlotRing>> SlotRing::Create(SlotLayout layout, int slots,
                                                           std::shared_ptr<DeviceContext> ctx) {
  std::shared_ptr<SlotRing> ring(new SlotRing(std::move(layout), std::move(ctx)));
  for (int k = 0; k < slots; ++k) RETURN_IF_ERROR(ring->Grow());
  return ring;
}

SlotRing::~SlotRing() {
  if (ctx_ == nullptr) return;
  // Copies and kernels queued on the stream may still use slot memory, and
  // so may the consumers' work on their streams after the last release: the
  // stream first waits for every slot's consumer fence (or the device is
  // synchronized when a consumer's streams were unknown).
  gpu::ScopedDevice on(ctx_->ordinal);
  for (auto& slot : slots_) (void)slot->fence.BeforeReuse(ctx_->stream.get());
  (void)cudaStreamSynchronize(ctx_->stream.get());
  slots_.clear();
}

int64_t SlotRing::BytesPerSlot(const SlotLayout& l) {
  int64_t bytes = l.index_on_device ? l.batch_size * 8 : 0;
  for (size_t f = 0; f < l.features.size(); ++f) {
    if (!l.present[f] || l.features[f].variable_length) continue;
    bytes += std::max<int64_t>(1, l.batch_size * l.features[f].row_bytes());
    if (l.transform_of[f] >= 0) {
      bytes += std::max<int64_t>(
          1, l.batch_size * l.transforms[l.transform_of[f]].transform.output_bytes_per_image());
    }
  }
  return bytes;
}

absl::Status SlotRing::Allocate(Slot* slot) {
  const SlotLayout& l = layout_;
  const size_t n = l.features.size();
  const bool gpu = ctx_ != nullptr;
  gpu::ScopedDevice on(gpu ? ctx_->ordinal : -1);
  RETURN_IF_ERROR(on.status());
  slot->rows_host.assign(n, nullptr);
  slot->heap.resize(n);
  slot->pinned.resize(n);
  slot->device.resize(n);
  slot->transformed_device.resize(n);
  slot->transformed_host.resize(n);
  slot->var_values.resize(n);
  slot->var_offsets.resize(n);
  slot->index.assign(l.batch_size, 0);
  for (size_t f = 0; f < n; ++f) {  // aligned, non-null addresses even when empty
    slot->var_values[f].reserve(kHostTensorAlignment);
    slot->var_offsets[f].reserve(l.batch_size + 1);
  }
  if (gpu) {
    ASSIGN_OR_RETURN(slot->copy_start, gpu::CudaEvent::Create(/*timing=*/true));
    ASSIGN_OR_RETURN(slot->ready, gpu::CudaEvent::Create(/*timing=*/true));
    if (l.index_on_device) {
      ASSIGN_OR_RETURN(slot->index_pinned, gpu::PinnedBuffer::Create(l.batch_size * 8));
      ASSIGN_OR_RETURN(slot->index_device, gpu::DeviceBuffer::Create(l.batch_size * 8));
    }
  }
  for (size_t f = 0; f < n; ++f) {
    const FeatureSpec& spec = l.features[f];
    if (!l.present[f] || spec.variable_length) continue;
    const size_t bytes = std::max<size_t>(1, l.batch_size * spec.row_bytes());
    if (gpu) {
      ASSIGN_OR_RETURN(slot->device[f], gpu::DeviceBuffer::Create(bytes));
      if (l.staged) {
        ASSIGN_OR_RETURN(slot->pinned[f], gpu::PinnedBuffer::Create(bytes));
        slot->rows_host[f] = static_cast<char*>(slot->pinned[f].get());
      }
    } else {
      slot->heap[f].resize(bytes);
      slot->rows_host[f] = slot->heap[f].data();
    }
    if (l.transform_of[f] >= 0) {
      const size_t out = std::max<size_t>(
          1, l.batch_size * l.transforms[l.transform_of[f]].transform.output_bytes_per_image());
      if (gpu) {
        ASSIGN_OR_RETURN(slot->transformed_device[f], gpu::DeviceBuffer::Create(out));
      } else {
        slot->transformed_host[f].resize(out);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status SlotRing::Grow() {
  // A slot that fails half-allocated is freed under the guard too.
  gpu::ScopedDevice on(ctx_ ? ctx_->ordinal : -1);
  RETURN_IF_ERROR(on.status());
  auto slot = std::make_unique<Slot>(ctx_ ? ctx_->ops.get() : nullptr);
  try {  // host memory: a failed allocation is an error, not std::terminate
    RETURN_IF_ERROR(Allocate(slot.get()));
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "out of host memory allocating a ring slot of ", layout_.batch_size,
        " rows: lower batch_size or prefetch"));
  }
  std::lock_guard<std::mutex> lock(mu);
  slots_.push_back(std::move(slot));
  cv.notify_all();
  return absl::OkStatus();
}

absl::Status SlotRing::AllHeldError() {
  std::lock_guard<std::mutex> lock(mu);
  return absl::FailedPreconditionError(absl::StrCat(
      "all ", slots_.size(), " ring slots are held by unreleased batches: release one (or raise "
      "prefetch, or set grow_ring) before asking for the next"));
}

SlotRing::Slot* SlotRing::FindFreeLocked(int* index) {
  for (size_t k = 0; k < slots_.size(); ++k) {
    if (slots_[k]->state == State::kFree) {
      *index = static_cast<int>(k);
      return slots_[k].get();
    }
  }
  return nullptr;
}

int SlotRing::CountLocked(State s) const {
  int n = 0;
  for (const auto& slot : slots_) n += slot->state == s;
  return n;
}

SlotRing::Slot* SlotRing::FindReadyLocked(uint64_t seq, int* index) {
  for (size_t k = 0; k < slots_.size(); ++k) {
    if (slots_[k]->state == State::kReady && slots_[k]->seq == seq) {
      *index = static_cast<int>(k);
      return slots_[k].get();
    }
  }
  return nullptr;
}

absl::Status SlotRing::PrepareFill(Slot* s) {
  if (ctx_ == nullptr) return absl::OkStatus();
  // Also on the consumer's thread (the resident path): relaxed capture mode.
  gpu::ScopedDevice on(ctx_->ordinal);
  RETURN_IF_ERROR(on.status());
  if (s->copy_recorded) {
    // The last copy out of the pinned rows (and kernels reading the slot's
    // indices) must be done before the host overwrites them.
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(s->ready.get()), "cudaEventSynchronize");
  }
  return s->fence.BeforeReuse(ctx_->stream.get());
}

std::vector<Tensor> SlotRing::Describe(Slot* s, int64_t rows) {
  const SlotLayout& l = layout_;
  const int dev = device();
  std::vector<Tensor> out;
  for (size_t f = 0; f < l.features.size(); ++f) {
    const FeatureSpec& spec = l.features[f];
    if (!l.present[f]) continue;
    if (spec.variable_length) {  // offsets count elements of spec.dtype
      out.push_back(Tensor{spec.name, spec.dtype,
                           {static_cast<int64_t>(s->var_values[f].size() / DTypeSize(spec.dtype))},
                           s->var_values[f].data(), s->var_values[f].size(), -1});
      out.push_back(Tensor{spec.name + "/offsets", DType::kInt64, {rows + 1},
                           s->var_offsets[f].data(), static_cast<size_t>(rows + 1) * 8, -1});
      continue;
    }
    const int t = l.transform_of[f];
    if (t >= 0) {
      void* data = dev >= 0 ? s->transformed_device[f].get()
                            : static_cast<void*>(s->transformed_host[f].data());
      out.push_back(TransformedTensor(spec.name, l.transforms[t].transform, rows, data, dev));
      continue;
    }
    Tensor t2;
    t2.name = spec.name;
    t2.dtype = spec.dtype;
    t2.shape = {rows};
    t2.shape.insert(t2.shape.end(), spec.shape.begin(), spec.shape.end());
    t2.bytes = rows * spec.row_bytes();
    t2.device = dev;
    t2.data = dev >= 0 ? s->device[f].get() : static_cast<void*>(s->rows_host[f]);
    out.push_back(std::move(t2));
  }
  if (l.record_index) {
    out.push_back(Tensor{kRecordIndexTensor, DType::kInt64, {rows}, s->index.data(),
                         static_cast<size_t>(rows) * 8, -1});
  }
  return out;
}

std::shared_ptr<internal::BatchLease> SlotRing::Lease(int k, Batch inner) {
  return std::make_shared<SlotLease>(shared_from_this(), k, std::move(inner));
}

Batch SlotRing::DeliverLocked(int k) {
  Slot* s = slots_[k].get();
  s->state = State::kInUse;
  return Batch(Lease(k), s->rows, s->epoch, Describe(s, s->rows),
               ctx_ ? static_cast<void*>(s->ready.get()) : nullptr,
               ctx_ ? ctx_->stream_handle() : nullptr);
}

absl::StatusOr<int> SlotRing::AwaitReady(uint64_t seq, absl::Duration timeout, bool grow,
                                         const std::function<bool()>& finished,
                                         const std::function<bool()>& fillers_wait,
                                         PipelineCounters* counters,
                                         std::unique_lock<std::mutex>* lock) {
  const double t0 = NowSeconds();
  const bool forever = timeout == absl::InfiniteDuration();
  const auto deadline =
      std::chrono::steady_clock::now() +
      (forever ? std::chrono::nanoseconds(0) : absl::ToChronoNanoseconds(timeout));
  auto wait = [&](const std::function<bool()>& until) {
    if (forever) {
      cv.wait(*lock, until);
      return true;
    }
    return cv.wait_until(*lock, deadline, until);
  };
  *lock = std::unique_lock<std::mutex>(mu);
  if (CountLocked(State::kInUse) == static_cast<int>(slots_.size())) {
    // The end of data comes first: wait until the fillers know whether
    // another batch comes (they end, or wait for a free slot).
    if (!wait([&] { return finished() || fillers_wait() ||
                           CountLocked(State::kInUse) < static_cast<int>(slots_.size()); })) {
      counters->wait.Add(NowSeconds() - t0);
      return absl::DeadlineExceededError("no batch yet");
    }
    if (finished()) return -1;  // (no slot is Ready: all were in use)
    if (CountLocked(State::kInUse) == static_cast<int>(slots_.size())) {
      lock->unlock();
      if (!grow) return AllHeldError();
      RETURN_IF_ERROR(Grow());
      lock->lock();
    }
  }
  counters->ready_samples += CountLocked(State::kReady);
  ++counters->next_calls;
  int k = -1;
  if (!wait([&] { return FindReadyLocked(seq, &k) != nullptr || finished(); })) {
    counters->wait.Add(NowSeconds() - t0);
    return absl::DeadlineExceededError("no batch yet");
  }
  counters->wait.Add(NowSeconds() - t0);
  return k;
}

int64_t CompactRows(const std::vector<FeatureSpec>& spec, const std::vector<char>& ok,
                    int64_t rows, std::vector<std::vector<std::string>>* var_rows,
                    SlotRing::Slot* s) {
  int64_t kept = 0;
  for (int64_t row = 0; row < rows; ++row) {
    if (!ok[row]) continue;
    if (kept != row) {
      s->index[kept] = s->index[row];
      for (size_t f = 0; f < spec.size(); ++f) {
        if (spec[f].variable_length) {
          std::swap((*var_rows)[f][kept], (*var_rows)[f][row]);
        } else if (s->rows_host[f] != nullptr) {
          std::memmove(s->rows_host[f] + kept * spec[f].row_bytes(),
                       s->rows_host[f] + row * spec[f].row_bytes(), spec[f].row_bytes());
        }
      }
    }
    ++kept;
  }
  for (size_t f = 0; f < spec.size(); ++f) {
    if (!spec[f].variable_length) continue;
    s->var_values[f].clear();
    s->var_offsets[f].assign(1, 0);
    const size_t element = DTypeSize(spec[f].dtype);
    for (int64_t r = 0; r < kept; ++r) {
      const std::string& row = (*var_rows)[f][r];
      s->var_values[f].insert(s->var_values[f].end(), row.begin(), row.end());
      s->var_offsets[f].push_back(static_cast<int64_t>(s->var_values[f].size() / element));
    }
  }
  return kept;
}

void SlotRing::Fence(int k, const ConsumerStreams& consumers) {
  std::lock_guard<std::mutex> lock(mu);
  slots_[k]->fence.OnRelease(consumers);
}

void SlotRing::Release(int k, const ConsumerStreams& consumers) {
  std::lock_guard<std::mutex> lock(mu);
  Slot* s = slots_[k].get();
  s->fence.OnRelease(consumers);
  s->state = State::kFree;
  cv.notify_all();
}

}  // namespace shardfeed
