#include "reader/loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gpu/cuda_resources.h"
#include "gpu/cuda_status.h"
#include "gpu/device.h"
#include "gpu/image_transform_kernel.h"
#include "reader/bounded_queue.h"
#include "reader/decoder.h"
#include "reader/epoch_plan.h"
#include "reader/feature_transforms.h"
#include "reader/resident_loader.h"
#include "reader/worker_pool.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/record_reader.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Nanosecond accumulators shared by threads.
struct Timer {
  std::atomic<int64_t> ns{0};
  void Add(double seconds) { ns.fetch_add(static_cast<int64_t>(seconds * 1e9)); }
  double seconds() const { return ns.load() / 1e9; }
};

// One record, copied out of the reader into its own buffer: the shuffle
// buffer then holds exactly its records (memory ~ shuffle_buffer x record
// size), not the larger read chunks they came from.
struct RecordRef {
  std::string bytes;
  size_t shard = 0;
  uint64_t offset = 0;   // in the shard
  int64_t ordinal = 0;   // record number in the shard
  absl::string_view data() const { return bytes; }
};

// A run of consecutive records of one shard, handed from an I/O thread to
// the producer.
struct Chunk {
  std::vector<RecordRef> records;
  size_t bytes = 0;
  size_t shard = 0;
  bool end_of_item = false;
  absl::Status error;  // DATA_LOSS etc., on the item's last chunk
  int64_t skipped = 0;
};
using ChunkPtr = std::shared_ptr<Chunk>;

constexpr size_t kChunkBytes = 256 << 10;

}  // namespace

// The slots, shared with Batches (which may outlive the Loader).
class Ring : public SlotOwner {
 public:
  enum class State { kFree, kFilling, kReady, kInUse };
  struct Slot {
    State state = State::kFree;
    uint64_t seq = 0;        // delivery order of the batch in the slot
    bool has_copied = false;  // a copy has been recorded on this slot's events
    int64_t rows = 0;
    int64_t epoch = 0;
    std::vector<std::unique_ptr<char[]>> host_memory;  // no GPU
    std::vector<gpu::PinnedBuffer> pinned;              // GPU: copy sources
    std::vector<char*> host;                            // per feature (fixed)
    std::vector<gpu::DeviceBuffer> device;              // per feature (fixed)
    std::vector<std::string> var_values;                // per feature (variable)
    std::vector<std::vector<int64_t>> var_offsets;
    std::vector<gpu::DeviceBuffer> transformed_device;       // per feature (transformed)
    std::vector<std::unique_ptr<char[]>> transformed_host;  // per feature (transformed)
    std::vector<int64_t> index;                              // record_index
    gpu::CudaEvent copy_start, copied, released;
    bool released_pending = false;
  };

  std::mutex mu;
  std::condition_variable cv;
  std::deque<Slot> slots;  // a deque: slots added by grow_ring never move
  bool gpu = false;

  void Release(int slot, void* consumer_stream) override {
    std::lock_guard<std::mutex> lock(mu);
    Slot& s = slots[slot];
    if (gpu && consumer_stream != nullptr &&
        cudaEventRecord(s.released.get(), static_cast<cudaStream_t>(consumer_stream)) ==
            cudaSuccess) {
      s.released_pending = true;
    }
    s.state = State::kFree;
    cv.notify_all();
  }
};

Batch::Batch(Batch&& o) noexcept { *this = std::move(o); }
Batch& Batch::operator=(Batch&& o) noexcept {
  if (this != &o) {
    Release();
    ring_ = std::move(o.ring_);
    slot_ = o.slot_;
    rows_ = o.rows_;
    epoch_ = o.epoch_;
    tensors_ = std::move(o.tensors_);
    event_ = o.event_;
    stream_ = o.stream_;
    inner_ = std::move(o.inner_);
    o.slot_ = -1;
  }
  return *this;
}
Batch::~Batch() { Release(); }

void Batch::Release(void* consumer_stream) {
  if (ring_ != nullptr && slot_ >= 0) ring_->Release(slot_, consumer_stream);
  slot_ = -1;
  ring_.reset();
  if (inner_ != nullptr) inner_->Release(consumer_stream);
  inner_.reset();
}

const Tensor* Batch::Find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

class Loader::Impl {
 public:
  Impl(Dataset dataset, LoaderOptions o) : ds_(std::move(dataset)), o_(std::move(o)) {}

  ~Impl() { Stop(); }

  absl::Status Start() {
    if (o_.features.empty()) {
      if (!ds_.manifest.has_value()) {
        return absl::InvalidArgumentError(
            "no feature spec: give LoaderOptions::features (or --spec), or a dataset with a "
            "manifest.json");
      }
      o_.features = SpecFromManifest(*ds_.manifest);
    }
    if (o_.batch_size < 1) return absl::InvalidArgumentError("batch_size must be >= 1");
    if (o_.prefetch < 2) return absl::InvalidArgumentError("prefetch must be >= 2 (double buffering)");
    if (o_.world_size < 1 || o_.rank < 0 || o_.rank >= o_.world_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank ", o_.rank, " is not in [0, world_size=", o_.world_size, ")"));
    }
    RETURN_IF_ERROR(ResolveTransforms(o_.features, &o_.transforms, &transform_of_));
    shard_start_.assign(ds_.shards.size(), 0);
    for (size_t i = 1; i < ds_.shards.size(); ++i) {
      shard_start_[i] = shard_start_[i - 1] + ds_.shards[i - 1].records;
    }
    o_.io_threads = std::max(1, o_.io_threads);
    o_.decode_threads = std::max(1, o_.decode_threads);
    o_.shuffle_buffer = std::max<int64_t>(1, o_.shuffle_buffer);
    const int64_t per_rank = RecordsPerRank(ds_, o_.world_size);
    batches_per_epoch_ = o_.drop_remainder ? per_rank / o_.batch_size
                                           : (per_rank + o_.batch_size - 1) / o_.batch_size;

    if (o_.device >= 0) {
      absl::Status s = StartGpu();
      if (!s.ok()) {
        device_note_ = absl::StrCat("GPU ", o_.device, " unavailable (", s.message(),
                                    "); delivering batches in host memory");
        device_ = -1;
      }
    }
    ring_ = std::make_shared<Ring>();
    ring_->gpu = device_ >= 0;
    ring_->slots.resize(o_.prefetch);
    for (Ring::Slot& slot : ring_->slots) RETURN_IF_ERROR(AllocateSlot(&slot));
    pool_ = std::make_unique<WorkerPool>(o_.decode_threads);
    start_ = Now();
    producer_ = std::thread([this] { Produce(); });
    return absl::OkStatus();
  }

  absl::StatusOr<Batch> Next(absl::Duration timeout) {
    const double t0 = Now();
    std::unique_lock<std::mutex> lock(ring_->mu);
    int ready = 0, held = 0;
    for (const auto& s : ring_->slots) {
      ready += s.state == Ring::State::kReady;
      held += s.state == Ring::State::kInUse;
    }
    if (held == static_cast<int>(ring_->slots.size())) {
      if (!o_.grow_ring) {
        return absl::FailedPreconditionError(absl::StrCat(
            "all ", held, " ring slots are held by unreleased batches: release one (or raise "
            "prefetch) before asking for the next"));
      }
      lock.unlock();
      Ring::Slot extra;
      if (device_ >= 0) RETURN_IF_CUDA_ERROR(cudaSetDevice(device_), "cudaSetDevice");
      RETURN_IF_ERROR(AllocateSlot(&extra));
      lock.lock();
      ring_->slots.push_back(std::move(extra));
      ring_->cv.notify_all();
    }
    ready_samples_ += ready;
    ++next_calls_;
    // The batches come in delivery order, whichever slots they were filled in.
    Ring::Slot* found = nullptr;
    int found_index = -1;
    auto next_ready = [&] {
      for (size_t k = 0; k < ring_->slots.size(); ++k) {
        Ring::Slot& s = ring_->slots[k];
        if (s.state == Ring::State::kReady && s.seq == next_consume_) {
          found = &s;
          found_index = static_cast<int>(k);
        }
      }
      return found != nullptr || producer_done_;
    };
    if (timeout == absl::InfiniteDuration()) {
      ring_->cv.wait(lock, next_ready);
    } else if (!ring_->cv.wait_for(lock, absl::ToChronoNanoseconds(timeout), next_ready)) {
      wait_.Add(Now() - t0);
      return absl::DeadlineExceededError("no batch yet");
    }
    wait_.Add(Now() - t0);
    if (found == nullptr) return final_status_;
    Ring::Slot& slot = *found;
    slot.state = Ring::State::kInUse;
    Batch b;
    b.ring_ = ring_;
    b.slot_ = found_index;
    b.rows_ = slot.rows;
    b.epoch_ = slot.epoch;
    if (device_ >= 0) {
      b.event_ = slot.copied.get();
      b.stream_ = stream_.get();
    }
    for (size_t f = 0; f < o_.features.size(); ++f) {
      const FeatureSpec& spec = o_.features[f];
      if (spec.variable_length) {
        Tensor values{spec.name, DType::kUint8, {static_cast<int64_t>(slot.var_values[f].size())},
                      slot.var_values[f].data(), slot.var_values[f].size(), -1};
        Tensor offsets{spec.name + "/offsets", DType::kInt64, {slot.rows + 1},
                       slot.var_offsets[f].data(), slot.var_offsets[f].size() * 8, -1};
        b.tensors_.push_back(std::move(values));
        b.tensors_.push_back(std::move(offsets));
        continue;
      }
      if (transform_of_[f] >= 0) {
        const gpu::ImageTransform& tr = o_.transforms[transform_of_[f]].transform;
        void* data = device_ >= 0 ? slot.transformed_device[f].get()
                                  : static_cast<void*>(slot.transformed_host[f].get());
        b.tensors_.push_back(TransformedTensor(spec.name, tr, slot.rows, data, device_));
        continue;
      }
      Tensor t;
      t.name = spec.name;
      t.dtype = spec.dtype;
      t.shape = {slot.rows};
      t.shape.insert(t.shape.end(), spec.shape.begin(), spec.shape.end());
      t.bytes = slot.rows * spec.row_bytes();
      t.device = device_;
      t.data = device_ >= 0 ? slot.device[f].get() : slot.host[f];
      b.tensors_.push_back(std::move(t));
    }
    if (o_.record_index) {
      b.tensors_.push_back(Tensor{kRecordIndexTensor, DType::kInt64, {slot.rows},
                                  slot.index.data(), static_cast<size_t>(slot.rows) * 8, -1});
    }
    ++next_consume_;
    ++batches_;
    records_ += slot.rows;
    return b;
  }

  LoaderStats stats() const {
    LoaderStats s;
    s.batches = batches_;
    s.records = records_;
    s.bytes = bytes_.load();
    s.skipped_records = skipped_.load();
    s.wall_seconds = Now() - start_;
    s.read_seconds = read_.seconds();
    s.crc_seconds = crc_.seconds();
    s.decode_seconds = decode_.seconds();
    s.copy_seconds = copy_.seconds();
    s.wait_seconds = wait_.seconds();
    s.mean_ready_slots = next_calls_ ? static_cast<double>(ready_samples_) / next_calls_ : 0;
    s.transform_seconds = transform_.seconds();
    return s;
  }

  const std::vector<FeatureSpec>& features() const { return o_.features; }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  int device() const { return device_; }
  const std::string& device_note() const { return device_note_; }

 private:
  absl::Status StartGpu() {
    ASSIGN_OR_RETURN(int count, gpu::CudaDeviceCount());
    if (o_.device >= count) {
      return absl::InvalidArgumentError(absl::StrCat("only ", count, " CUDA devices"));
    }
    RETURN_IF_CUDA_ERROR(cudaSetDevice(o_.device), "cudaSetDevice");
    ASSIGN_OR_RETURN(stream_, gpu::CudaStream::Create());
    device_ = o_.device;
    return absl::OkStatus();
  }

  absl::Status AllocateSlot(Ring::Slot* slot) {
    const size_t n = o_.features.size();
    slot->host.assign(n, nullptr);
    slot->var_values.resize(n);
    slot->var_offsets.resize(n);
    slot->host_memory.resize(n);
    slot->transformed_device.resize(n);
    slot->transformed_host.resize(n);
    if (o_.record_index) slot->index.assign(o_.batch_size, 0);
    if (device_ >= 0) {
      slot->pinned.resize(n);
      slot->device.resize(n);
      ASSIGN_OR_RETURN(slot->copy_start, gpu::CudaEvent::Create(/*timing=*/true));
      ASSIGN_OR_RETURN(slot->copied, gpu::CudaEvent::Create(/*timing=*/true));
      ASSIGN_OR_RETURN(slot->released, gpu::CudaEvent::Create());
    }
    for (size_t f = 0; f < n; ++f) {
      const FeatureSpec& spec = o_.features[f];
      if (spec.variable_length) continue;
      const size_t bytes = o_.batch_size * spec.row_bytes();
      if (device_ >= 0) {
        ASSIGN_OR_RETURN(slot->pinned[f], gpu::PinnedBuffer::Create(bytes));
        ASSIGN_OR_RETURN(slot->device[f], gpu::DeviceBuffer::Create(bytes));
        slot->host[f] = static_cast<char*>(slot->pinned[f].get());
      } else {
        slot->host_memory[f].reset(new char[bytes == 0 ? 1 : bytes]);
        slot->host[f] = slot->host_memory[f].get();
      }
      if (transform_of_[f] >= 0) {
        const size_t out = o_.batch_size *
                           o_.transforms[transform_of_[f]].transform.output_bytes_per_image();
        if (device_ >= 0) {
          ASSIGN_OR_RETURN(slot->transformed_device[f], gpu::DeviceBuffer::Create(out));
        } else {
          slot->transformed_host[f].reset(new char[out == 0 ? 1 : out]);
        }
      }
    }
    return absl::OkStatus();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(queues_mu_);
      stop_.store(true);
      for (auto& q : queues_) q->Cancel();
    }
    if (ring_) {
      std::lock_guard<std::mutex> lock(ring_->mu);
      ring_->cv.notify_all();
    }
    if (producer_.joinable()) producer_.join();
  }

  // --- I/O threads -----------------------------------------------------------

  void ReadItems(int thread, const std::vector<WorkItem>* items, BoundedQueue<ChunkPtr>* queue) {
    for (size_t i = thread; i < items->size() && !stop_.load(); i += o_.io_threads) {
      if (!ReadItem((*items)[i], queue)) return;
    }
  }

  // Returns false when cancelled.
  bool ReadItem(const WorkItem& item, BoundedQueue<ChunkPtr>* queue) {
    const ShardEntry& shard = ds_.shards[item.shard];
    auto chunk = std::make_shared<Chunk>();
    chunk->shard = item.shard;
    auto fail = [&](absl::Status s) {
      chunk->error = std::move(s);
      chunk->end_of_item = true;
      return queue->Push(std::move(chunk));
    };
    RecordReaderOptions ro;
    ro.verify_data_crc = false;  // verified below, timed separately
    double t0 = Now();
    auto reader = RecordReader::Open(shard.path, ro);
    if (!reader.ok()) return fail(reader.status());
    absl::string_view record;
    int64_t skip = item.first;
    if (!shard.index.empty() && item.first > 0) {
      absl::Status s = (*reader)->SeekToOffset(shard.index[item.first].offset);
      if (!s.ok()) return fail(s);
      skip = 0;
    }
    for (int64_t k = 0; k < skip; ++k) {
      absl::Status s = (*reader)->ReadRecord(&record);
      if (!s.ok()) return fail(s);
    }
    for (int64_t k = 0; k < item.count; ++k) {
      if (stop_.load()) return false;
      absl::Status s = (*reader)->ReadRecord(&record);
      if (absl::IsOutOfRange(s)) {
        s = DataLossAt(shard.path, (*reader)->offset(),
                       absl::StrCat("the shard ends after ", item.first + k, " records; ",
                                    item.first + item.count, " were expected (stale index or "
                                    "manifest? run shardfeed check)"));
      }
      if (!s.ok()) {
        read_.Add(Now() - t0);
        return fail(s);
      }
      const double t1 = Now();
      read_.Add(t1 - t0);
      const bool crc_ok = crc32c::Value(record.data(), record.size()) ==
                          (*reader)->last_stored_data_crc();
      t0 = Now();
      crc_.Add(t0 - t1);
      if (!crc_ok) {
        absl::Status bad = DataLossAt(shard.path, (*reader)->last_record_offset(),
                                      absl::StrCat("corrupted record: data CRC mismatch (",
                                                   record.size(), " data bytes)"));
        if (!o_.skip_corrupt) return fail(bad);
        ++chunk->skipped;
        continue;
      }
      bytes_.fetch_add(static_cast<int64_t>(record.size()));
      RecordRef& r = chunk->records.emplace_back();
      r.bytes.assign(record.data(), record.size());
      r.shard = item.shard;
      r.offset = (*reader)->last_record_offset();
      r.ordinal = item.first + k;
      chunk->bytes += record.size();
      if (chunk->bytes >= kChunkBytes && k + 1 < item.count) {
        if (!queue->Push(std::move(chunk))) return false;
        chunk = std::make_shared<Chunk>();
        chunk->shard = item.shard;
      }
    }
    chunk->end_of_item = true;
    return queue->Push(std::move(chunk));
  }

  // --- The record stream of one epoch (deterministic order) -----------------

  class EpochStream {
   public:
    EpochStream(Impl* impl, int64_t epoch) : impl_(impl), epoch_(epoch) {
      const LoaderOptions& o = impl->o_;
      items_ = PlanEpoch(impl->ds_, o.seed, epoch, o.shuffle, o.rank, o.world_size);
      rng_.seed(o.seed * 0x2545f4914f6cdd1dull + epoch * 7919 + o.rank + 1);
      {
        // A queue made after Stop() is cancelled at once, so nothing blocks.
        std::lock_guard<std::mutex> lock(impl->queues_mu_);
        for (int t = 0; t < o.io_threads; ++t) {
          impl->queues_.push_back(std::make_unique<BoundedQueue<ChunkPtr>>(4));
          if (impl->stop_.load()) impl->queues_.back()->Cancel();
          queues_.push_back(impl->queues_.back().get());
        }
      }
      for (int t = 0; t < o.io_threads; ++t) {
        threads_.emplace_back([impl, t, this] { impl->ReadItems(t, &items_, queues_[t]); });
      }
    }
    ~EpochStream() {
      {
        std::lock_guard<std::mutex> lock(impl_->queues_mu_);
        for (auto& q : impl_->queues_) q->Cancel();
      }
      for (auto& t : threads_) t.join();
      std::lock_guard<std::mutex> lock(impl_->queues_mu_);
      impl_->queues_.clear();
    }

    // The next record in shuffled order: true, false at the end of the epoch.
    absl::StatusOr<bool> Next(RecordRef* out) {
      const int64_t capacity = impl_->o_.shuffle ? impl_->o_.shuffle_buffer : 1;
      while (!input_done_ && static_cast<int64_t>(buffer_.size()) < capacity) {
        RecordRef r;
        ASSIGN_OR_RETURN(bool got, NextInOrder(&r));
        if (!got) {
          input_done_ = true;
          break;
        }
        buffer_.push_back(std::move(r));
      }
      if (buffer_.empty()) return false;
      size_t j = impl_->o_.shuffle ? rng_() % buffer_.size() : 0;
      if (!impl_->o_.shuffle) {
        *out = std::move(buffer_.front());
        buffer_.erase(buffer_.begin());
        return true;
      }
      *out = std::move(buffer_[j]);
      buffer_[j] = std::move(buffer_.back());
      buffer_.pop_back();
      return true;
    }

   private:
    absl::StatusOr<bool> NextInOrder(RecordRef* out) {
      for (;;) {
        if (chunk_ && pos_ < chunk_->records.size()) {
          *out = std::move(chunk_->records[pos_++]);
          return true;
        }
        if (chunk_ && chunk_->end_of_item) {
          ++item_;
          chunk_.reset();
        }
        if (item_ >= items_.size()) return false;
        ChunkPtr next;
        if (!queues_[item_ % queues_.size()]->Pop(&next)) {
          return absl::CancelledError("loader stopped");
        }
        impl_->skipped_.fetch_add(next->skipped);
        if (!next->error.ok()) {
          if (!impl_->o_.skip_corrupt || !absl::IsDataLoss(next->error)) return next->error;
          impl_->skipped_.fetch_add(1);  // the damaged record; the rest of the part is lost
        }
        chunk_ = std::move(next);
        pos_ = 0;
      }
    }

    Impl* impl_;
    int64_t epoch_;
    std::vector<WorkItem> items_;
    std::vector<BoundedQueue<ChunkPtr>*> queues_;  // owned by Impl::queues_
    std::vector<std::thread> threads_;
    std::mt19937_64 rng_;
    std::vector<RecordRef> buffer_;
    bool input_done_ = false;
    size_t item_ = 0;
    ChunkPtr chunk_;
    size_t pos_ = 0;
  };

  // --- The producer: batches into ring slots ---------------------------------

  void Produce() {
    absl::Status s = ProduceAll();
    std::lock_guard<std::mutex> lock(ring_->mu);
    final_status_ = s.ok() ? absl::OutOfRangeError("end of data: all epochs delivered") : s;
    producer_done_ = true;
    ring_->cv.notify_all();
  }

  absl::Status ProduceAll() {
    if (device_ >= 0) RETURN_IF_CUDA_ERROR(cudaSetDevice(device_), "cudaSetDevice");
    for (int64_t epoch = 0; o_.epochs == 0 || epoch < o_.epochs; ++epoch) {
      EpochStream stream(this, epoch);
      for (;;) {
        if (stop_.load()) return absl::CancelledError("loader stopped");
        ASSIGN_OR_RETURN(bool more, FillSlot(&stream, epoch));
        if (!more) break;
      }
    }
    return absl::OkStatus();
  }

  // Fills the next slot with one batch; false at the end of the epoch.
  absl::StatusOr<bool> FillSlot(EpochStream* stream, int64_t epoch) {
    // Any free slot: a batch the consumer still holds only shrinks the ring.
    Ring::Slot* free_slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(ring_->mu);
      ring_->cv.wait(lock, [&] {
        const size_t n = ring_->slots.size();  // grow_ring may add slots
        for (size_t k = 0; k < n && free_slot == nullptr; ++k) {
          Ring::Slot& s = ring_->slots[(next_fill_ + k) % n];
          if (s.state == Ring::State::kFree) free_slot = &s;
        }
        return stop_.load() || free_slot != nullptr;
      });
      if (stop_.load()) return absl::CancelledError("loader stopped");
      free_slot->state = Ring::State::kFilling;
    }
    Ring::Slot& slot = *free_slot;
    if (device_ >= 0) {
      // The previous copy out of this slot's pinned memory must be done.
      RETURN_IF_CUDA_ERROR(cudaEventSynchronize(slot.copied.get()), "cudaEventSynchronize");
      float ms = 0;
      if (slot.has_copied &&
          cudaEventElapsedTime(&ms, slot.copy_start.get(), slot.copied.get()) == cudaSuccess) {
        copy_.Add(ms / 1e3);
      }
    }
    const size_t nf = o_.features.size();
    std::vector<std::vector<std::string>> row_values(nf);
    for (size_t f = 0; f < nf; ++f) {
      if (o_.features[f].variable_length) row_values[f].assign(o_.batch_size, std::string());
    }
    int64_t rows = 0;
    std::vector<RecordRef> refs;
    while (rows < o_.batch_size) {
      refs.clear();
      while (rows + static_cast<int64_t>(refs.size()) < o_.batch_size) {
        RecordRef r;
        ASSIGN_OR_RETURN(bool got, stream->Next(&r));
        if (!got) break;
        refs.push_back(std::move(r));
      }
      if (refs.empty()) break;
      std::vector<absl::Status> errors(refs.size());
      const int64_t base = rows;
      const double t0 = Now();
      pool_->ParallelFor(refs.size(), [&](size_t begin, size_t end) {
        const double w0 = Now();
        std::vector<char*> fixed(nf);
        std::vector<std::string*> var(nf);
        for (size_t i = begin; i < end; ++i) {
          const int64_t row = base + static_cast<int64_t>(i);
          for (size_t f = 0; f < nf; ++f) {
            fixed[f] = slot.host[f] ? slot.host[f] + row * o_.features[f].row_bytes() : nullptr;
            var[f] = o_.features[f].variable_length ? &row_values[f][row] : nullptr;
            if (var[f]) var[f]->clear();
          }
          errors[i] = DecodeExampleRow(refs[i].data(), o_.features, fixed.data(), var.data());
          if (o_.record_index) {
            slot.index[row] = shard_start_[refs[i].shard] + refs[i].ordinal;
          }
        }
        decode_.Add(Now() - w0);
      });
      (void)t0;
      // Failed rows: an error, or (skip_corrupt) compacted away.
      int64_t kept = base;
      for (size_t i = 0; i < refs.size(); ++i) {
        const int64_t row = base + static_cast<int64_t>(i);
        if (!errors[i].ok()) {

          absl::Status located = absl::DataLossError(absl::StrCat(
              ds_.shards[refs[i].shard].path, ":", refs[i].offset, ": ", errors[i].message()));
          if (!o_.skip_corrupt) return located;
          skipped_.fetch_add(1);
          continue;
        }
        if (kept != row) {
          if (o_.record_index) slot.index[kept] = slot.index[row];
          for (size_t f = 0; f < nf; ++f) {
            const FeatureSpec& spec = o_.features[f];
            if (spec.variable_length) {
              row_values[f][kept] = std::move(row_values[f][row]);
            } else {
              std::memmove(slot.host[f] + kept * spec.row_bytes(),
                           slot.host[f] + row * spec.row_bytes(), spec.row_bytes());
            }
          }
        }
        ++kept;
      }
      rows = kept;
    }
    if (rows == 0 || (rows < o_.batch_size && o_.drop_remainder)) {
      std::lock_guard<std::mutex> lock(ring_->mu);
      slot.state = Ring::State::kFree;
      return false;
    }
    for (size_t f = 0; f < nf; ++f) {
      if (!o_.features[f].variable_length) continue;
      slot.var_values[f].clear();
      slot.var_offsets[f].assign(1, 0);
      for (int64_t r = 0; r < rows; ++r) {
        slot.var_values[f] += row_values[f][r];
        slot.var_offsets[f].push_back(static_cast<int64_t>(slot.var_values[f].size()));
      }
    }
    if (device_ < 0) {
      const double t0 = Now();
      for (size_t f = 0; f < nf; ++f) {
        if (transform_of_[f] < 0) continue;
        RETURN_IF_ERROR(gpu::TransformImagesOnHost(
            o_.transforms[transform_of_[f]].transform,
            reinterpret_cast<const uint8_t*>(slot.host[f]), rows, samples_filled_,
            slot.transformed_host[f].get()));
      }
      transform_.Add(Now() - t0);
    }
    if (device_ >= 0) RETURN_IF_ERROR(CopyToDevice(&slot, rows));
    samples_filled_ += rows;
    {
      std::lock_guard<std::mutex> lock(ring_->mu);
      slot.rows = rows;
      slot.epoch = epoch;
      slot.seq = next_fill_;
      slot.state = Ring::State::kReady;
      ring_->cv.notify_all();
    }
    ++next_fill_;
    return true;
  }

  absl::Status CopyToDevice(Ring::Slot* slot, int64_t rows) {
    cudaStream_t s = stream_.get();
    if (slot->released_pending) {
      // The consumer's work on this slot's last batch must finish first.
      RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(s, slot->released.get(), 0), "cudaStreamWaitEvent");
      slot->released_pending = false;
    }
    RETURN_IF_CUDA_ERROR(cudaEventRecord(slot->copy_start.get(), s), "cudaEventRecord");
    for (size_t f = 0; f < o_.features.size(); ++f) {
      const FeatureSpec& spec = o_.features[f];
      if (spec.variable_length) continue;
      RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(slot->device[f].get(), slot->host[f],
                                           rows * spec.row_bytes(), cudaMemcpyHostToDevice, s),
                           "cudaMemcpyAsync host to device");
      if (transform_of_[f] >= 0) {
        RETURN_IF_CUDA_ERROR(
            gpu::LaunchImageTransform(o_.transforms[transform_of_[f]].transform,
                                      static_cast<const uint8_t*>(slot->device[f].get()), rows,
                                      samples_filled_, slot->transformed_device[f].get(), s),
            "image transform kernel launch");
      }
    }
    RETURN_IF_CUDA_ERROR(cudaEventRecord(slot->copied.get(), s), "cudaEventRecord");
    slot->has_copied = true;
    return absl::OkStatus();
  }

  Dataset ds_;
  LoaderOptions o_;
  int device_ = -1;
  std::string device_note_;
  gpu::CudaStream stream_;
  std::shared_ptr<Ring> ring_;
  std::unique_ptr<WorkerPool> pool_;
  std::mutex queues_mu_;  // guards queues_ (the vector; the queues lock themselves)
  std::vector<std::unique_ptr<BoundedQueue<ChunkPtr>>> queues_;
  std::thread producer_;
  std::atomic<bool> stop_{false};
  bool producer_done_ = false;  // guarded by ring_->mu
  absl::Status final_status_;   // guarded by ring_->mu
  uint64_t next_fill_ = 0;
  uint64_t next_consume_ = 0;
  int64_t batches_per_epoch_ = 0;
  int64_t batches_ = 0, records_ = 0;
  int64_t ready_samples_ = 0, next_calls_ = 0;
  std::atomic<int64_t> bytes_{0}, skipped_{0};
  Timer read_, crc_, decode_, copy_, wait_, transform_;
  std::vector<int> transform_of_;      // per feature: index into o_.transforms, or -1
  std::vector<int64_t> shard_start_;   // per shard: dataset position of its first record
  int64_t samples_filled_ = 0;         // producer thread only
  double start_ = 0;
};

absl::StatusOr<std::unique_ptr<Loader>> Loader::Create(Dataset dataset,
                                                       const LoaderOptions& options) {
  std::string cache_note;
  if (options.cache.enabled) {
    ASSIGN_OR_RETURN(std::unique_ptr<ResidentLoader> resident,
                     ResidentLoader::Create(dataset, options, &cache_note));
    if (resident != nullptr) {
      return std::unique_ptr<Loader>(new Loader(nullptr, std::move(resident), cache_note));
    }
  }
  LoaderOptions streaming = options;
  streaming.cache = CacheOptions();
  auto impl = std::make_unique<Impl>(std::move(dataset), streaming);
  RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<Loader>(new Loader(std::move(impl), nullptr, std::move(cache_note)));
}

Loader::Loader(std::unique_ptr<Impl> impl, std::unique_ptr<ResidentLoader> resident,
               std::string cache_note)
    : impl_(std::move(impl)), resident_(std::move(resident)), cache_note_(std::move(cache_note)) {}
Loader::~Loader() = default;
absl::StatusOr<Batch> Loader::Next(absl::Duration timeout) {
  return resident_ ? resident_->Next(timeout) : impl_->Next(timeout);
}
LoaderStats Loader::stats() const { return resident_ ? resident_->stats() : impl_->stats(); }
const std::vector<FeatureSpec>& Loader::features() const {
  return resident_ ? resident_->features() : impl_->features();
}
int64_t Loader::batches_per_epoch() const {
  return resident_ ? resident_->batches_per_epoch() : impl_->batches_per_epoch();
}
int Loader::device() const { return resident_ ? resident_->device() : impl_->device(); }
const std::string& Loader::device_note() const {
  return resident_ ? resident_->device_note() : impl_->device_note();
}
const std::string& Loader::cache_note() const { return cache_note_; }

}  // namespace shardfeed
