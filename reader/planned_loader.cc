#include "reader/planned_loader.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpu/device_guard.h"
#include "reader/device_copy.h"
#include "reader/epoch_plan.h"
#include "reader/extent_plan.h"
#include "reader/extent_reading.h"
#include "record/status_macros.h"

namespace shardfeed {

BatchSequence::BatchSequence(const ResolvedOptions& r)
    : n_(r.total_records), batch_(r.o.batch_size), epochs_(r.o.epochs), world_(r.o.world_size),
      drop_(r.o.drop_remainder), seed_(r.o.seed) {
  if (r.o.resume.has_value()) {
    first_epoch_ = r.o.resume->epoch;
    first_start_ = r.o.resume->position;
    first_batches_ = r.o.resume->world_size == world_ ? r.o.resume->batches : 0;
  }
  first_count_ = RankBatchCount(first_start_, n_, world_, batch_, drop_);
  full_ = RankBatchCount(0, n_, world_, batch_, drop_);
}

bool BatchSequence::Locate(uint64_t g, PlannedBatch* out) const {
  const int64_t gi = static_cast<int64_t>(g);
  if (gi < first_count_) {
    *out = {first_epoch_, first_start_, gi, first_count_};
  } else if (full_ == 0) {
    *out = {first_epoch_ + 1, 0, 0, 0};
    return false;
  } else {
    const int64_t rest = gi - first_count_;
    *out = {first_epoch_ + 1 + rest / full_, 0, rest % full_, full_};
  }
  return epochs_ == 0 || out->epoch < epochs_;
}

LoaderState BatchSequence::StateBefore(uint64_t g, uint64_t fingerprint) const {
  LoaderState s;
  s.seed = seed_;
  s.world_size = world_;
  s.fingerprint = fingerprint;
  PlannedBatch b;
  const bool more = Locate(g, &b);
  s.epoch = b.epoch;
  if (!more) return s;  // past the end: the start of the next epoch
  s.position = PositionAfter(b.start, n_, world_, batch_, b.k, b.count);
  s.batches = b.k + (b.epoch == first_epoch_ ? first_batches_ : 0);
  return s;
}

namespace {

class PlannedLoader : public Loader::Backend {
 public:
  PlannedLoader(Dataset ds, std::unique_ptr<ShardFiles> files, const ResolvedOptions& r,
                std::shared_ptr<DeviceContext> ctx, std::string note)
      : ds_(std::move(ds)), files_(std::move(files)), r_(r), seq_(r_), ctx_(std::move(ctx)),
        device_note_(std::move(note)) {
    for (const ShardEntry& s : ds_.shards) shard_records_.push_back(s.records);
  }

  ~PlannedLoader() override {
    if (ring_ != nullptr) {
      std::lock_guard<std::mutex> lock(ring_->mu);
      stop_ = true;
      ring_->cv.notify_all();
    }
    for (std::thread& t : workers_) t.join();
  }

  int workers() const { return std::max(r_.o.io_threads, r_.o.decode_threads); }

  // Quasi orders permute extents (reader/extent_plan.h); remote shards are
  // read through the extent prefetcher.
  absl::Status StartExtents() {
    const bool remote = [&] {
      for (size_t s = 0; s < files_->shards(); ++s) {
        if (files_->remote(s) != nullptr) return true;
      }
      return false;
    }();
    if (r_.mode != ShuffleMode::kQuasi && !remote) return absl::OkStatus();
    extents_ = std::make_shared<ExtentPlan>(ds_, r_);
    ASSIGN_OR_RETURN(prefetcher_, StartExtentReading(r_, extents_, workers(), files_.get()));
    return absl::OkStatus();
  }

  absl::Status Start() {
    RETURN_IF_ERROR(StartExtents());
    ASSIGN_OR_RETURN(ring_, SlotRing::Create(LayoutFor(r_), r_.o.prefetch, ctx_));
    c_.start = NowSeconds();
    const int n = workers();
    for (int t = 0; t < n; ++t) {
      try {
        workers_.emplace_back([this] { Work(); });
      } catch (const std::system_error& e) {  // run with the workers that started
        if (workers_.empty()) {
          return absl::ResourceExhaustedError(
              absl::StrCat("could not start a loader worker thread: ", e.what()));
        }
        break;
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Batch> Next(absl::Duration timeout) override {
    if (!final_.ok()) return final_;
    std::unique_lock<std::mutex> lock;
    // The plan says where the data ends: no filler needs to reach it first
    // (with every slot held, none could).
    PlannedBatch unused;
    ASSIGN_OR_RETURN(int k, ring_->AwaitReady(
                                next_, timeout, r_.o.grow_ring,
                                [&] { return !seq_.Locate(next_, &unused); },
                                [] { return true; }, &c_, &lock));
    if (k < 0) return absl::OutOfRangeError("end of data: all epochs delivered");
    SlotRing::Slot* s = ring_->slot_locked(k);
    if (!s->error.ok()) {
      final_ = s->error;
      s->state = SlotRing::State::kFree;
      stop_ = true;
      ring_->cv.notify_all();
      return final_;
    }
    ++next_;
    ++c_.batches;
    c_.records += s->rows;
    return ring_->DeliverLocked(k);
  }

  LoaderStats stats() const override {
    LoaderStats s = c_.ToStats();
    if (prefetcher_ != nullptr) {
      const ExtentTraffic t = prefetcher_->traffic();
      s.remote_requests = t.requests;
      s.remote_bytes = t.bytes;
      s.extent_cache_hits = t.hits;
      s.remote_in_flight = t.in_flight;
      s.remote_first_byte_seconds = t.first_byte_seconds;
      s.remote_bytes_per_second = t.bytes_per_second;
    }
    return s;
  }
  const std::vector<FeatureSpec>& features() const override { return r_.o.features; }
  int64_t batches_per_epoch() const override { return seq_.full_epoch_batches(); }
  int device() const override { return ctx_ ? ctx_->ordinal : -1; }
  const std::string& device_note() const override { return device_note_; }
  LoaderState state() const override {
    return seq_.StateBefore(next_, PathFingerprint(r_, "planned"));
  }

 private:
  // An epoch's order, built once, by the first worker that needs it,
  // outside every lock (a kQuasi/global table is O(N) to build).
  struct OrderEntry {
    std::once_flag once;
    std::shared_ptr<const EpochOrder> order;
  };

  // The entry of `epoch` (called at claim time, with ring_->mu held: claims
  // go in epoch order). Entries of older epochs that no worker holds are
  // dropped: a worker still filling an older epoch keeps its own.
  std::shared_ptr<OrderEntry> OrderEntryOf(int64_t epoch) {
    std::lock_guard<std::mutex> lock(orders_mu_);
    for (auto it = orders_.begin(); it != orders_.end() && it->first < epoch;) {
      it = it->second.use_count() == 1 ? orders_.erase(it) : std::next(it);
    }
    std::shared_ptr<OrderEntry>& entry = orders_[epoch];
    if (entry == nullptr) entry = std::make_shared<OrderEntry>();
    return entry;
  }

  const EpochOrder& OrderOf(int64_t epoch, OrderEntry* entry) {
    std::call_once(entry->once, [&] {
      entry->order = PlannedEpochOrder(
          r_, shard_records_, extents_ != nullptr ? extents_->extent_records() : no_extents_,
          epoch);
    });
    return *entry->order;
  }

  void Work() {
    // Bare CUDA calls here (events, copies) must not initialize device 0; a
    // failure surfaces through the first slot this worker claims.
    const absl::Status bound = gpu::BindThreadToDevice(ctx_ ? ctx_->ordinal : -1);
    BatchFiller filler(&ds_, files_.get(), &r_);
    std::vector<int64_t> records;
    for (;;) {
      SlotRing::Slot* s = nullptr;
      uint64_t g = 0;
      PlannedBatch b;
      std::shared_ptr<OrderEntry> order;
      {
        std::unique_lock<std::mutex> lock(ring_->mu);
        int k = -1;
        ring_->cv.wait(lock, [&] {
          return stop_ || end_ || (s = ring_->FindFreeLocked(&k)) != nullptr;
        });
        if (stop_ || end_) return;
        g = next_claim_;
        if (!seq_.Locate(g, &b)) {
          end_ = true;
          ring_->cv.notify_all();
          return;
        }
        ++next_claim_;
        s->state = SlotRing::State::kFilling;
        order = OrderEntryOf(b.epoch);
        if (prefetcher_ != nullptr) prefetcher_->Claimed(g);
      }
      int64_t rows = 0;
      absl::Status st =
          bound.ok() ? Fill(s, b, OrderOf(b.epoch, order.get()), &filler, &records, &rows) : bound;
      order.reset();
      if (prefetcher_ != nullptr) prefetcher_->Filled(g, absl::IsDataLoss(st));
      std::lock_guard<std::mutex> lock(ring_->mu);
      s->seq = g;
      s->rows = rows;
      s->epoch = b.epoch;
      s->error = st;
      s->state = SlotRing::State::kReady;
      ring_->cv.notify_all();
    }
  }

  absl::Status Fill(SlotRing::Slot* s, const PlannedBatch& b, const EpochOrder& order,
                    BatchFiller* filler, std::vector<int64_t>* records, int64_t* rows) {
    RETURN_IF_ERROR(ring_->PrepareFill(s));
    if (ctx_ != nullptr) c_.copy.Add(LastCopySeconds(s));
    const PositionRange range =
        RankBatch(b.start, r_.total_records, r_.o.world_size, r_.o.rank, r_.o.batch_size, b.k);
    records->resize(range.rows);
    for (int64_t i = 0; i < range.rows; ++i) (*records)[i] = order.RecordAt(range.first + i);
    const uint64_t first_sample =
        static_cast<uint64_t>(b.epoch) * r_.total_records + range.first;
    FillCounters c;
    absl::StatusOr<int64_t> kept = filler->Fill(*records, s, first_sample, &c);
    c_.read.Add(c.read_seconds);
    c_.crc.Add(c.crc_seconds);
    c_.decode.Add(c.decode_seconds);
    c_.bytes.fetch_add(c.bytes);
    c_.skipped.fetch_add(c.skipped);
    RETURN_IF_ERROR(kept.status());
    *rows = *kept;
    const double t0 = NowSeconds();
    RETURN_IF_ERROR(FinishSlot(ring_.get(), s, *rows, first_sample));
    if (ctx_ == nullptr) c_.transform.Add(NowSeconds() - t0);
    return absl::OkStatus();
  }

  const Dataset ds_;
  std::vector<int64_t> shard_records_;
  std::shared_ptr<ExtentPlan> extents_;  // quasi or remote: the extents
  const std::vector<int64_t> no_extents_;
  std::unique_ptr<ShardFiles> files_;
  std::shared_ptr<ExtentPrefetcher> prefetcher_;  // remote shards
  const ResolvedOptions r_;
  const BatchSequence seq_;
  std::shared_ptr<DeviceContext> ctx_;
  std::string device_note_;
  std::shared_ptr<SlotRing> ring_;
  std::vector<std::thread> workers_;
  std::mutex orders_mu_;  // guards orders_ (not the building of an order)
  std::map<int64_t, std::shared_ptr<OrderEntry>> orders_;
  // Guarded by ring_->mu.
  bool stop_ = false, end_ = false;
  uint64_t next_claim_ = 0;
  // Consumer thread.
  uint64_t next_ = 0;
  absl::Status final_;
  PipelineCounters c_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Loader::Backend>> CreatePlannedLoader(
    const Dataset& dataset, std::unique_ptr<ShardFiles> files, const ResolvedOptions& options,
    std::shared_ptr<DeviceContext> ctx, std::string device_note) {
  RETURN_IF_ERROR(CheckResume(options, PathFingerprint(options, "planned")));
  if (options.mode != ShuffleMode::kSequential && options.o.map_shards) {
    RETURN_IF_ERROR(files->Map(/*random_access=*/true));
  }
  auto loader = std::make_unique<PlannedLoader>(dataset, std::move(files), options,
                                                std::move(ctx), std::move(device_note));
  RETURN_IF_ERROR(loader->Start());
  return std::unique_ptr<Loader::Backend>(std::move(loader));
}

}  // namespace shardfeed
