#include "reader/resident_loader.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gpu/cuda_status.h"
#include "gpu/device_guard.h"
#include "gpu/gather_kernel.h"
#include "gpu/image_transform_kernel.h"
#include "reader/epoch_plan.h"
#include "reader/planned_loader.h"
#include "reader/slot_ring.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

std::string Mb(int64_t bytes) { return absl::StrFormat("%.1f MB", bytes / 1e6); }

class ResidentLoader : public Loader::Backend {
 public:
  ResidentLoader(const Dataset& ds, const ResolvedOptions& r, std::shared_ptr<DeviceContext> ctx,
                 std::string note)
      : ds_(ds), r_(r), o_(r_.o), ctx_(std::move(ctx)), device_note_(std::move(note)) {}

  ~ResidentLoader() override {
    stream_loader_.reset();
    ring_.reset();  // batches still out keep their slots; the table goes below
    if (ctx_ != nullptr) {
      gpu::ScopedDevice on(ctx_->ordinal);
      (void)cudaStreamSynchronize(ctx_->stream.get());  // gathers read the table
    }
    FreeTable();
  }

  // False (and *note) when the table and the ring do not fit the budget,
  // or allocating them runs out of memory: the loader streams instead.
  absl::StatusOr<bool> Start(std::string* note) {
    start_ = NowSeconds();
    RETURN_IF_ERROR(ChooseResidentFeatures());
    const int64_t n = r_.total_records;
    int64_t row_bytes = 0;
    std::vector<std::string> names;
    for (size_t f : resident_) {
      row_bytes += o_.features[f].row_bytes();
      names.push_back(o_.features[f].name);
    }
    const int64_t table_bytes = n * row_bytes;
    SlotLayout l = LayoutFor(r_);
    l.present.assign(o_.features.size(), false);
    for (size_t f : resident_) l.present[f] = true;
    l.staged = false;
    l.record_index = true;  // the gather's indices; removed from batches unless asked for
    l.index_on_device = ctx_ != nullptr;
    // The rings take the same memory as the table: this one, and the
    // streamed features' (partial residency).
    SlotLayout streamed = LayoutFor(r_);
    for (size_t f : resident_) streamed.present[f] = false;
    const int64_t ring_bytes =
        o_.prefetch * (SlotRing::BytesPerSlot(l) +
                       (streamed_.empty() ? 0 : SlotRing::BytesPerSlot(streamed)));
    ASSIGN_OR_RETURN(int64_t budget, Budget());
    const std::string where = ctx_ ? absl::StrCat("GPU ", ctx_->ordinal) : "host memory";
    const std::string what = absl::StrCat("resident cache: ", absl::StrJoin(names, ", "), " of ",
                                          n, " records need ", Mb(table_bytes), " (+ ",
                                          Mb(ring_bytes), " of ring slots)");
    if (table_bytes + ring_bytes > budget) {
      *note = absl::StrCat(what, ", more than the budget of ", Mb(budget), " in ", where,
                           "; streaming instead");
      return false;
    }
    absl::Status allocated = AllocateTable(n);
    if (allocated.ok()) {
      absl::StatusOr<std::shared_ptr<SlotRing>> ring = SlotRing::Create(std::move(l), o_.prefetch,
                                                                        ctx_);
      allocated = ring.status();
      if (ring.ok()) ring_ = *std::move(ring);
    }
    if (absl::IsResourceExhausted(allocated)) {  // as documented: stream instead
      FreeTable();
      ring_.reset();
      *note = absl::StrCat(what, ": out of memory in ", where, " (", allocated.message(),
                           "); streaming instead");
      return false;
    }
    RETURN_IF_ERROR(allocated);
    RETURN_IF_ERROR(LoadTable());
    stats_.cache_bytes = table_bytes;
    stats_.cache_load_seconds = NowSeconds() - start_;
    *note = absl::StrCat("resident cache: ", absl::StrJoin(names, ", "), " of ", valid_.size(),
                         " records (", Mb(table_bytes), ") in ", where, ", loaded in ",
                         absl::StrFormat("%.2f s", stats_.cache_load_seconds),
                         streamed_.empty() ? "" : "; the other features stream");
    // The plan runs over the records that loaded.
    plan_ = r_;
    plan_.total_records = static_cast<int64_t>(valid_.size());
    if (streamed_.empty()) {
      if (o_.epochs == 0 && RankBatchCount(0, plan_.total_records, o_.world_size,
                                           o_.batch_size, o_.drop_remainder) == 0) {
        return absl::InvalidArgumentError("epochs = 0 (forever) with an epoch that yields no batch");
      }
      RETURN_IF_ERROR(CheckResumePath(r_, "resident"));
      RETURN_IF_ERROR(CheckResume(r_, PathFingerprint(r_, "resident")));
      seq_ = std::make_unique<BatchSequence>(plan_);
    } else {
      RETURN_IF_ERROR(StartStreaming());
    }
    return true;
  }

  absl::StatusOr<Batch> Next(absl::Duration timeout) override {
    if (!final_.ok()) return final_;
    absl::StatusOr<Batch> b = streamed_.empty() ? NextResident() : NextJoined(timeout);
    if (!b.ok() && !absl::IsFailedPrecondition(b.status()) &&
        !absl::IsDeadlineExceeded(b.status())) {
      final_ = b.status();
    }
    return b;
  }

  LoaderStats stats() const override {
    LoaderStats s = stream_loader_ ? stream_loader_->stats() : LoaderStats();
    s.batches = stats_.batches;
    s.records = stats_.records;
    s.wall_seconds = NowSeconds() - start_;
    s.cache_bytes = stats_.cache_bytes;
    s.cache_load_seconds = stats_.cache_load_seconds;
    s.transform_seconds += stats_.transform_seconds;
    return s;
  }
  const std::vector<FeatureSpec>& features() const override { return o_.features; }
  int64_t batches_per_epoch() const override {
    return seq_ ? seq_->full_epoch_batches() : stream_loader_->batches_per_epoch();
  }
  int device() const override { return ctx_ ? ctx_->ordinal : -1; }
  const std::string& device_note() const override { return device_note_; }
  LoaderState state() const override {
    return seq_ ? seq_->StateBefore(next_, PathFingerprint(r_, "resident"))
                : stream_loader_->state();
  }

 private:
  absl::StatusOr<int64_t> Budget() {
    if (o_.cache.budget_bytes > 0) return o_.cache.budget_bytes;
    if (ctx_ == nullptr) {
      return static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / 4;
    }
    gpu::ScopedDevice on(ctx_->ordinal);
    RETURN_IF_ERROR(on.status());
    size_t free_bytes = 0, total = 0;
    RETURN_IF_CUDA_ERROR(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    // The training job needs the device too: a quarter of it, and never
    // more than half of what is free now.
    return static_cast<int64_t>(std::min(total / 4, free_bytes / 2));
  }

  // The table's memory, freed under the device guard (a bare cudaFree on a
  // thread with no context would create device 0's context).
  void FreeTable() {
    gpu::ScopedDevice on(ctx_ ? ctx_->ordinal : -1);
    table_device_.clear();
    table_host_.clear();
  }

  absl::Status ChooseResidentFeatures() {
    std::vector<bool> resident(o_.features.size(), o_.cache.features.empty());
    for (const std::string& name : o_.cache.features) {
      size_t f = 0;
      while (f < o_.features.size() && o_.features[f].name != name) ++f;
      if (f == o_.features.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("cache feature '", name, "' is not in the feature spec"));
      }
      if (o_.features[f].variable_length) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cache feature '", name, "' is variable-length: only fixed-shape features can "
            "be resident"));
      }
      resident[f] = true;
    }
    for (size_t f = 0; f < o_.features.size(); ++f) {
      if (resident[f] && o_.features[f].variable_length) resident[f] = false;  // default set
      (resident[f] ? resident_ : streamed_).push_back(f);
    }
    if (resident_.empty()) {
      return absl::InvalidArgumentError("resident cache: no fixed-shape feature to keep resident");
    }
    return absl::OkStatus();
  }

  absl::Status AllocateTable(int64_t n) {
    gpu::ScopedDevice on(ctx_ ? ctx_->ordinal : -1);
    RETURN_IF_ERROR(on.status());
    table_device_.resize(o_.features.size());
    table_host_.resize(o_.features.size());
    for (size_t f : resident_) {
      const size_t bytes = std::max<size_t>(1, n * o_.features[f].row_bytes());
      if (ctx_ != nullptr) {
        ASSIGN_OR_RETURN(table_device_[f], gpu::DeviceBuffer::Create(bytes));
      } else {
        table_host_[f].reset(new char[bytes]);
      }
    }
    return absl::OkStatus();
  }

  char* TableRow(size_t f, int64_t index) {
    const size_t rb = o_.features[f].row_bytes();
    return (ctx_ ? static_cast<char*>(table_device_[f].get()) : table_host_[f].get()) +
           index * rb;
  }

  // One sequential pass of a host Loader, in dataset order, into the table.
  absl::Status LoadTable() {
    LoaderOptions lo;
    for (size_t f : resident_) lo.features.push_back(o_.features[f]);
    lo.batch_size = 1024;
    lo.shuffle = false;
    lo.epochs = 1;
    lo.io_threads = o_.io_threads;
    lo.decode_threads = o_.decode_threads;
    lo.device = -1;
    lo.skip_corrupt = o_.skip_corrupt;
    lo.record_index = true;
    ASSIGN_OR_RETURN(std::unique_ptr<Loader> loader, Loader::Create(ds_, lo));
    const int64_t n = r_.total_records;
    std::vector<char> seen(n, 0);
    gpu::ScopedDevice on(ctx_ ? ctx_->ordinal : -1);
    RETURN_IF_ERROR(on.status());
    for (;;) {
      absl::StatusOr<Batch> b = loader->Next();
      if (absl::IsOutOfRange(b.status())) break;
      RETURN_IF_ERROR(b.status());
      const auto* idx = static_cast<const int64_t*>(b->Find(kRecordIndexTensor)->data);
      const int64_t rows = b->size();
      for (int64_t i = 0; i < rows; ++i) {
        if (idx[i] < 0 || idx[i] >= n) {
          return absl::InternalError(absl::StrCat("record index ", idx[i], " outside [0, ", n, ")"));
        }
        seen[idx[i]] = 1;
      }
      for (size_t k = 0; k < resident_.size(); ++k) {
        const size_t f = resident_[k];
        const char* src = static_cast<const char*>(b->tensors()[k].data);
        const size_t rb = o_.features[f].row_bytes();
        for (int64_t i = 0; i < rows;) {
          int64_t run = 1;  // rows with consecutive indices: one copy
          while (i + run < rows && idx[i + run] == idx[i] + run) ++run;
          if (ctx_ != nullptr) {
            // On the loader's stream, where the gathers run: cudaMemcpy on the
            // legacy stream would return once the pageable source is staged,
            // its write unordered with the non-blocking stream's gathers.
            RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(TableRow(f, idx[i]), src + i * rb, run * rb,
                                                 cudaMemcpyHostToDevice, ctx_->stream.get()),
                                 "cudaMemcpyAsync into the resident table");
          } else {
            std::memcpy(TableRow(f, idx[i]), src + i * rb, run * rb);
          }
          i += run;
        }
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      if (seen[i]) valid_.push_back(i);
    }
    if (ctx_ != nullptr) {  // the table is complete (and the load time honest)
      RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(ctx_->stream.get()),
                           "cudaStreamSynchronize after loading the resident table");
    }
    return absl::OkStatus();
  }

  absl::Status StartStreaming() {
    LoaderOptions so = o_;
    so.cache = CacheOptions();
    so.features.clear();
    for (size_t f : streamed_) so.features.push_back(o_.features[f]);
    so.transforms.clear();
    for (const FeatureTransform& t : o_.transforms) {
      for (size_t f : streamed_) {
        if (o_.features[f].name == t.feature) so.transforms.push_back(t);
      }
    }
    so.record_index = true;
    ASSIGN_OR_RETURN(stream_loader_, Loader::Create(ds_, so));
    if (stream_loader_->device() != device()) {
      return absl::InternalError("the streamed and resident features landed on different devices");
    }
    return absl::OkStatus();
  }

  // A free slot, marked InUse (held batches only shrink the ring), or
  // FAILED_PRECONDITION when the consumer holds them all (unless grow_ring).
  absl::StatusOr<int> TakeSlot() {
    for (int attempt = 0; attempt < 2; ++attempt) {
      {
        std::lock_guard<std::mutex> lock(ring_->mu);
        int k = -1;
        if (SlotRing::Slot* s = ring_->FindFreeLocked(&k)) {
          s->state = SlotRing::State::kFilling;
          return k;
        }
      }
      if (!o_.grow_ring) break;
      RETURN_IF_ERROR(ring_->Grow());
    }
    return ring_->AllHeldError();
  }

  absl::StatusOr<Batch> NextResident() {
    PlannedBatch pb;
    if (!seq_->Locate(next_, &pb)) return absl::OutOfRangeError("end of data: all epochs delivered");
    ASSIGN_OR_RETURN(int k, TakeSlot());
    SlotRing::Slot* slot;
    {
      std::lock_guard<std::mutex> lock(ring_->mu);
      slot = ring_->slot_locked(k);
    }
    absl::Status st = ring_->PrepareFill(slot);
    const PositionRange range = RankBatch(pb.start, plan_.total_records, o_.world_size, o_.rank,
                                          o_.batch_size, pb.k);
    if (order_ == nullptr || order_epoch_ != pb.epoch) {
      order_ = std::make_unique<EpochOrder>(r_.mode, o_.seed, pb.epoch,
                                            std::vector<int64_t>{plan_.total_records},
                                            o_.shuffle_buffer);
      order_epoch_ = pb.epoch;
    }
    for (int64_t i = 0; i < range.rows; ++i) {
      slot->index[i] = valid_[order_->RecordAt(range.first + i)];
    }
    const uint64_t first_sample = static_cast<uint64_t>(pb.epoch) * r_.total_records + range.first;
    if (st.ok()) st = Gather(slot, range.rows, first_sample, nullptr);
    return Finish(k, slot, st, range.rows, pb.epoch, Batch());
  }

  absl::StatusOr<Batch> NextJoined(absl::Duration timeout) {
    // A free slot first, so a held ring does not consume a streamed batch.
    ASSIGN_OR_RETURN(int k, TakeSlot());
    absl::StatusOr<Batch> streamed = stream_loader_->Next(timeout);
    SlotRing::Slot* slot;
    {
      std::lock_guard<std::mutex> lock(ring_->mu);
      slot = ring_->slot_locked(k);
    }
    if (!streamed.ok()) return Finish(k, slot, streamed.status(), 0, 0, Batch());
    const int64_t rows = streamed->size();
    absl::Status st = ring_->PrepareFill(slot);
    std::memcpy(slot->index.data(), streamed->Find(kRecordIndexTensor)->data, rows * 8);
    const int64_t epoch = streamed->epoch();
    if (epoch != samples_epoch_) {
      // Resumed mid-epoch: the inner loader skipped the state's batches.
      const bool resumed = samples_epoch_ < 0 && o_.resume.has_value() && o_.resume->epoch == epoch;
      samples_ = resumed ? static_cast<uint64_t>(o_.resume->batches * o_.batch_size) : 0;
      samples_epoch_ = epoch;
    }
    // Global numbering, as the other paths: this rank's rows of the epoch
    // follow the rank * (N / W) rows of the ranks before it.
    const uint64_t first_sample = static_cast<uint64_t>(epoch) * r_.total_records +
                                  static_cast<uint64_t>(o_.rank) *
                                      (r_.total_records / o_.world_size) + samples_;
    if (st.ok()) st = Gather(slot, rows, first_sample, streamed->cuda_event());
    return Finish(k, slot, st, rows, epoch, *std::move(streamed));
  }

  // Gathers (and transforms) the resident features of the slot's indexed rows.
  absl::Status Gather(SlotRing::Slot* slot, int64_t rows, uint64_t first_sample,
                      void* streamed_ready) {
    const SlotLayout& l = ring_->layout();
    if (ctx_ == nullptr) {
      const double t0 = NowSeconds();
      for (size_t f : resident_) {
        gpu::GatherRowsOnHost(table_host_[f].get(), o_.features[f].row_bytes(),
                              slot->index.data(), rows, slot->rows_host[f]);
        if (l.transform_of[f] >= 0) {
          RETURN_IF_ERROR(gpu::TransformImagesOnHost(
              o_.transforms[l.transform_of[f]].transform,
              reinterpret_cast<const uint8_t*>(slot->rows_host[f]), rows, first_sample,
              slot->transformed_host[f].data()));
        }
      }
      stats_.transform_seconds += NowSeconds() - t0;
      return absl::OkStatus();
    }
    gpu::ScopedDevice on(ctx_->ordinal);
    RETURN_IF_ERROR(on.status());
    cudaStream_t s = ctx_->stream.get();
    std::memcpy(slot->index_pinned.get(), slot->index.data(), rows * 8);
    if (streamed_ready != nullptr) {
      RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(s, static_cast<cudaEvent_t>(streamed_ready), 0),
                           "cudaStreamWaitEvent");
    }
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(slot->index_device.get(), slot->index_pinned.get(),
                                         rows * 8, cudaMemcpyHostToDevice, s),
                         "cudaMemcpyAsync of batch indices");
    const auto* idx = static_cast<const int64_t*>(slot->index_device.get());
    for (size_t f : resident_) {
      RETURN_IF_CUDA_ERROR(gpu::LaunchGatherRows(table_device_[f].get(),
                                                 o_.features[f].row_bytes(), idx, rows,
                                                 slot->device[f].get(), s),
                           "gather kernel launch");
      if (l.transform_of[f] >= 0) {
        RETURN_IF_CUDA_ERROR(
            gpu::LaunchImageTransform(o_.transforms[l.transform_of[f]].transform,
                                      static_cast<const uint8_t*>(slot->device[f].get()), rows,
                                      first_sample, slot->transformed_device[f].get(), s),
            "image transform kernel launch");
      }
    }
    RETURN_IF_CUDA_ERROR(cudaEventRecord(slot->ready.get(), s), "cudaEventRecord");
    slot->copy_recorded = true;
    return absl::OkStatus();
  }

  // Delivers slot k (or hands it back on error): resident tensors, joined
  // with `streamed`'s in spec order.
  absl::StatusOr<Batch> Finish(int k, SlotRing::Slot* slot, const absl::Status& st, int64_t rows,
                               int64_t epoch, Batch streamed) {
    std::lock_guard<std::mutex> lock(ring_->mu);
    if (!st.ok()) {
      slot->state = SlotRing::State::kFree;
      ring_->cv.notify_all();
      return st;
    }
    slot->rows = rows;
    slot->epoch = epoch;
    slot->state = SlotRing::State::kInUse;
    std::vector<Tensor> resident = ring_->Describe(slot, rows);
    std::vector<Tensor> tensors;
    size_t r = 0;
    for (size_t f = 0; f < o_.features.size(); ++f) {
      if (ring_->layout().present[f]) {
        tensors.push_back(resident[r++]);
        continue;
      }
      for (const Tensor& t : streamed.tensors()) {
        if (t.name == o_.features[f].name || t.name == o_.features[f].name + "/offsets") {
          tensors.push_back(t);
        }
      }
    }
    if (o_.record_index) tensors.push_back(resident.back());
    ++next_;
    samples_ += rows;
    ++stats_.batches;
    stats_.records += rows;
    void* event = ctx_ ? static_cast<void*>(slot->ready.get()) : nullptr;
    return Batch(ring_->Lease(k, std::move(streamed)), rows, epoch, std::move(tensors), event,
                 ctx_ ? ctx_->stream_handle() : nullptr);
  }

  const Dataset ds_;
  const ResolvedOptions r_;
  const LoaderOptions& o_;
  std::shared_ptr<DeviceContext> ctx_;
  std::string device_note_;
  ResolvedOptions plan_;                       // r_ over the loaded records
  std::unique_ptr<BatchSequence> seq_;         // full residency
  std::unique_ptr<EpochOrder> order_;
  int64_t order_epoch_ = -1;
  std::vector<size_t> resident_, streamed_;    // feature positions in o_.features
  std::vector<gpu::DeviceBuffer> table_device_;
  std::vector<std::unique_ptr<char[]>> table_host_;
  std::vector<int64_t> valid_;                 // loaded record indices
  std::unique_ptr<Loader> stream_loader_;      // partial residency only
  std::shared_ptr<SlotRing> ring_;
  uint64_t next_ = 0;
  uint64_t samples_ = 0;      // rows delivered in samples_epoch_ (partial residency)
  int64_t samples_epoch_ = -1;
  absl::Status final_;
  LoaderStats stats_;
  double start_ = 0;
};

}  // namespace

absl::Status CheckResumePath(const ResolvedOptions& r, absl::string_view path) {
  if (!r.o.resume.has_value() || r.o.resume->fingerprint == PathFingerprint(r, path)) {
    return absl::OkStatus();
  }
  for (absl::string_view other : {"resident", "planned", "streaming"}) {
    if (other == path || r.o.resume->fingerprint != PathFingerprint(r, other)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "resume: the state was taken on the ", other, " path, this loader reads on the ", path,
        " path, whose order differs",
        other == "resident" || path == "resident"
            ? " (whether the resident cache is used depends on its budget: with budget 0, on "
              "the memory free at start; set the budget, or disable the cache, as when the "
              "state was taken)"
            : " (the planned path needs every shard indexed and uncompressed)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Loader::Backend>> CreateResidentLoader(
    const Dataset& dataset, const ResolvedOptions& options, std::shared_ptr<DeviceContext> ctx,
    std::string device_note, std::string* cache_note) {
  auto loader =
      std::make_unique<ResidentLoader>(dataset, options, std::move(ctx), std::move(device_note));
  ASSIGN_OR_RETURN(bool fits, loader->Start(cache_note));
  if (!fits) return std::unique_ptr<Loader::Backend>();
  return std::unique_ptr<Loader::Backend>(std::move(loader));
}

}  // namespace shardfeed
