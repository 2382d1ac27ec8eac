#include "reader/streaming_loader.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpu/device_guard.h"
#include "reader/decoder.h"
#include "reader/device_copy.h"
#include "reader/epoch_plan.h"
#include "reader/record_stream.h"
#include "reader/slot_ring.h"
#include "reader/worker_pool.h"
#include "record/errors.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

class StreamingLoader : public Loader::Backend {
 public:
  StreamingLoader(Dataset ds, const ResolvedOptions& r, std::shared_ptr<DeviceContext> ctx,
                  std::string note)
      : ds_(std::move(ds)), r_(r), ctx_(std::move(ctx)), device_note_(std::move(note)) {
    per_rank_ = r_.total_records / r_.o.world_size;
    bpe_ = BatchesFor(per_rank_, r_.o.batch_size, r_.o.drop_remainder);
    if (r_.o.resume.has_value()) {
      first_epoch_ = r_.o.resume->epoch;
      skip_ = r_.o.resume->batches;
    }
    epoch_ = first_epoch_;
    epoch_batches_ = 0;
  }

  ~StreamingLoader() override {
    stop_.store(true);
    if (ring_ != nullptr) {
      std::lock_guard<std::mutex> lock(ring_->mu);
      ring_->cv.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(stream_mu_);
      if (stream_ != nullptr) stream_->Cancel();
    }
    if (producer_.joinable()) producer_.join();
  }

  absl::Status Start() {
    ASSIGN_OR_RETURN(ring_, SlotRing::Create(LayoutFor(r_), r_.o.prefetch, ctx_));
    pool_ = std::make_unique<WorkerPool>(r_.o.decode_threads);
    c_.start = NowSeconds();
    // Resuming: the producer passes over the state's batches (records read
    // and counted, not decoded nor copied); delivery continues after them.
    epoch_batches_ = skip_;
    try {
      producer_ = std::thread([this] { Produce(); });
    } catch (const std::system_error& e) {
      return absl::ResourceExhaustedError(
          absl::StrCat("could not start the loader's producer thread: ", e.what()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Batch> Next(absl::Duration timeout) override { return NextBatch(timeout); }

  LoaderStats stats() const override {
    LoaderStats s = c_.ToStats();
    s.read_seconds = counters_.read.seconds();
    s.crc_seconds = counters_.crc.seconds();
    s.bytes = counters_.bytes.load();
    return s;
  }
  const std::vector<FeatureSpec>& features() const override { return r_.o.features; }
  int64_t batches_per_epoch() const override { return bpe_; }
  int device() const override { return ctx_ ? ctx_->ordinal : -1; }
  const std::string& device_note() const override { return device_note_; }
  LoaderState state() const override {
    LoaderState s;
    s.seed = r_.o.seed;
    s.world_size = r_.o.world_size;
    s.fingerprint = PathFingerprint(r_, "streaming");
    s.epoch = epoch_;
    s.batches = epoch_batches_;
    s.position = std::min(r_.total_records, epoch_batches_ * r_.o.batch_size * r_.o.world_size);
    return s;
  }

 private:
  absl::StatusOr<Batch> NextBatch(absl::Duration timeout) {
    std::unique_lock<std::mutex> lock;
    ASSIGN_OR_RETURN(int k, ring_->AwaitReady(next_consume_, timeout, r_.o.grow_ring,
                                              [&] { return producer_done_; },
                                              [&] { return producer_waits_; }, &c_, &lock));
    if (k < 0) return final_status_;
    SlotRing::Slot* s = ring_->slot_locked(k);
    ++next_consume_;
    ++c_.batches;
    c_.records += s->rows;
    if (s->epoch != epoch_) {
      epoch_ = s->epoch;
      epoch_batches_ = 0;
    }
    ++epoch_batches_;
    if (epoch_batches_ == bpe_) {  // the state after an epoch is the next one's start
      ++epoch_;
      epoch_batches_ = 0;
    }
    return ring_->DeliverLocked(k);
  }

  void Produce() {
    // Bare CUDA calls here (events, copies) must not initialize device 0.
    absl::Status s = gpu::BindThreadToDevice(ctx_ ? ctx_->ordinal : -1);
    if (s.ok()) s = ProduceAll();
    std::lock_guard<std::mutex> lock(ring_->mu);
    final_status_ = s.ok() ? absl::OutOfRangeError("end of data: all epochs delivered") : s;
    producer_done_ = true;
    ring_->cv.notify_all();
  }

  absl::Status ProduceAll() {
    for (int64_t epoch = first_epoch_; r_.o.epochs == 0 || epoch < r_.o.epochs; ++epoch) {
      {
        std::lock_guard<std::mutex> lock(stream_mu_);
        if (stop_.load()) return absl::CancelledError("loader stopped");
        stream_ = std::make_unique<RecordStream>(&ds_, &r_, epoch, &counters_);
      }
      debt_ = 0;
      position_ = 0;
      if (epoch == first_epoch_) RETURN_IF_ERROR(SkipResumed());
      for (;;) {
        if (stop_.load()) return absl::CancelledError("loader stopped");
        ASSIGN_OR_RETURN(bool more, FillSlot(epoch));
        if (!more) break;
      }
      std::lock_guard<std::mutex> lock(stream_mu_);
      stream_.reset();
    }
    return absl::OkStatus();
  }

  // The resumed epoch's first skip_ batches: collected (so positions and
  // skipped records count as before) and dropped.
  absl::Status SkipResumed() {
    for (int64_t i = 0; i < skip_; ++i) {
      if (stop_.load()) return absl::CancelledError("loader stopped");
      int64_t positions = 0;
      ASSIGN_OR_RETURN(bool any, Collect(&refs_, &positions));
      if (!any) break;
      position_ += positions;
    }
    return absl::OkStatus();
  }

  // Waits for a free slot; nullptr when stopped.
  SlotRing::Slot* TakeSlot() {
    std::unique_lock<std::mutex> lock(ring_->mu);
    SlotRing::Slot* s = nullptr;
    int k = -1;
    producer_waits_ = true;  // the consumer's end-of-data check (AwaitReady)
    ring_->cv.notify_all();
    ring_->cv.wait(lock, [&] { return stop_.load() || (s = ring_->FindFreeLocked(&k)); });
    producer_waits_ = false;
    if (stop_.load()) return nullptr;
    s->state = SlotRing::State::kFilling;
    return s;
  }

  // Collects the next batch's records: up to B positions of this rank's
  // stream, skipped records counting as positions. False: the epoch is done.
  absl::StatusOr<bool> Collect(std::vector<StreamedRecord>* refs, int64_t* positions) {
    const int64_t b = r_.o.batch_size;
    refs->clear();
    *positions = 0;
    for (;;) {
      const int64_t take = std::min(debt_, b - *positions);
      debt_ -= take;
      *positions += take;
      c_.skipped.fetch_add(take);
      if (*positions == b) break;
      StreamedRecord rec;
      ASSIGN_OR_RETURN(bool got, stream_->Next(&rec));
      debt_ += stream_->TakeSkipped();
      if (!got) {
        if (debt_ > 0) continue;
        break;
      }
      refs->push_back(std::move(rec));
      ++*positions;
    }
    return *positions == b || (*positions > 0 && !r_.o.drop_remainder);
  }

  absl::StatusOr<bool> FillSlot(int64_t epoch) {
    std::vector<StreamedRecord>& refs = refs_;
    int64_t positions = 0;
    ASSIGN_OR_RETURN(bool any, Collect(&refs, &positions));
    if (!any) return false;
    SlotRing::Slot* slot = TakeSlot();
    if (slot == nullptr) return absl::CancelledError("loader stopped");
    absl::Status st = ring_->PrepareFill(slot);
    if (ctx_ != nullptr) c_.copy.Add(LastCopySeconds(slot));
    // Global numbering (as the planned path): rank r's positions follow the
    // r * per_rank_ positions of the ranks before it, so ranks never share a
    // sample number (and so never share random crops and flips).
    const uint64_t first_sample = static_cast<uint64_t>(epoch) * r_.total_records +
                                  static_cast<uint64_t>(r_.o.rank) * per_rank_ + position_;
    int64_t rows = 0;
    if (st.ok()) st = Decode(slot, refs, first_sample, &rows);
    const double t0 = NowSeconds();
    if (st.ok()) st = FinishSlot(ring_.get(), slot, rows, first_sample);
    if (ctx_ == nullptr) c_.transform.Add(NowSeconds() - t0);
    position_ += positions;
    std::lock_guard<std::mutex> lock(ring_->mu);
    if (!st.ok()) {
      slot->state = SlotRing::State::kFree;
      return st;
    }
    slot->rows = rows;
    slot->epoch = epoch;
    slot->seq = next_fill_++;
    slot->state = SlotRing::State::kReady;
    ring_->cv.notify_all();
    return true;
  }

  // Decodes `refs` into the slot's rows in parallel; failed rows are an
  // error, or (skip_corrupt) compacted away.
  absl::Status Decode(SlotRing::Slot* slot, const std::vector<StreamedRecord>& refs,
                      uint64_t first_sample, int64_t* rows) {
    const std::vector<FeatureSpec>& spec = r_.o.features;
    const size_t nf = spec.size();
    row_values_.resize(nf);
    for (size_t f = 0; f < nf; ++f) {
      if (spec[f].variable_length) row_values_[f].resize(std::max<size_t>(refs.size(), 1));
    }
    std::vector<absl::Status> errors(refs.size());
    pool_->ParallelFor(refs.size(), [&](size_t begin, size_t end) {
      const double w0 = NowSeconds();
      std::vector<char*> fixed(nf);
      std::vector<std::string*> var(nf);
      for (size_t i = begin; i < end; ++i) {
        for (size_t f = 0; f < nf; ++f) {
          fixed[f] = slot->rows_host[f] ? slot->rows_host[f] + i * spec[f].row_bytes() : nullptr;
          var[f] = spec[f].variable_length ? &row_values_[f][i] : nullptr;
          if (var[f]) var[f]->clear();
        }
        errors[i] = DecodeExampleRow(refs[i].bytes, spec, fixed.data(), var.data(),
                                     DecodeContext{r_.o.seed, first_sample + i});
        slot->index[i] = r_.shard_start[refs[i].shard] + refs[i].ordinal;
      }
      c_.decode.Add(NowSeconds() - w0);
    });
    std::vector<char> ok(refs.size(), 1);
    for (size_t i = 0; i < refs.size(); ++i) {
      if (errors[i].ok()) continue;
      absl::Status located =
          DataLossAt(ds_.shards[refs[i].shard].path, refs[i].offset, errors[i].message());
      if (!r_.o.skip_corrupt) return located;
      c_.skipped.fetch_add(1);
      ok[i] = 0;
    }
    const int64_t kept =
        CompactRows(spec, ok, static_cast<int64_t>(refs.size()), &row_values_, slot);
    *rows = kept;
    return absl::OkStatus();
  }

  const Dataset ds_;
  const ResolvedOptions r_;
  std::shared_ptr<DeviceContext> ctx_;
  std::string device_note_;
  std::shared_ptr<SlotRing> ring_;
  std::unique_ptr<WorkerPool> pool_;
  std::thread producer_;
  std::atomic<bool> stop_{false};
  std::mutex stream_mu_;  // guards stream_ (the pointer) against Cancel
  std::unique_ptr<RecordStream> stream_;
  StreamCounters counters_;
  // Producer thread.
  int64_t debt_ = 0, position_ = 0;
  uint64_t next_fill_ = 0;
  std::vector<StreamedRecord> refs_;
  std::vector<std::vector<std::string>> row_values_;
  // Guarded by ring_->mu.
  bool producer_done_ = false;
  bool producer_waits_ = false;  // in TakeSlot: another batch is coming
  absl::Status final_status_;
  // Consumer thread.
  uint64_t next_consume_ = 0;
  int64_t first_epoch_ = 0, skip_ = 0, epoch_ = 0, epoch_batches_ = 0;
  int64_t per_rank_ = 0, bpe_ = 0;
  PipelineCounters c_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Loader::Backend>> CreateStreamingLoader(
    const Dataset& dataset, const ResolvedOptions& options, std::shared_ptr<DeviceContext> ctx,
    std::string device_note) {
  if (options.o.resume.has_value() && options.o.resume->world_size != options.o.world_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the state is of world_size ", options.o.resume->world_size, ", this loader has ",
        options.o.world_size, "; changing it needs indexed, uncompressed shards (planned path)"));
  }
  RETURN_IF_ERROR(CheckResume(options, PathFingerprint(options, "streaming")));
  auto loader = std::make_unique<StreamingLoader>(dataset, options, std::move(ctx),
                                                  std::move(device_note));
  RETURN_IF_ERROR(loader->Start());
  return std::unique_ptr<Loader::Backend>(std::move(loader));
}

}  // namespace shardfeed
