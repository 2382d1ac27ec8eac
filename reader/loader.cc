// Batch, and Loader: picks the reading path (resident, planned or
// streaming) after resolving the options and the device once.
#include "reader/loader.h"

#include "absl/strings/str_cat.h"
#include "reader/batch_filler.h"
#include "reader/device_context.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"
#include "reader/planned_loader.h"
#include "reader/resident_loader.h"
#include "reader/slot_ring.h"
#include "reader/streaming_loader.h"
#include "record/status_macros.h"

namespace shardfeed {

Batch::Batch(std::shared_ptr<internal::BatchLease> lease, int64_t rows, int64_t epoch,
             std::vector<Tensor> tensors, void* event, void* stream)
    : lease_(std::move(lease)), rows_(rows), epoch_(epoch), tensors_(std::move(tensors)),
      event_(event), stream_(stream) {}

Batch::Batch(Batch&& o) noexcept { *this = std::move(o); }
Batch& Batch::operator=(Batch&& o) noexcept {
  if (this != &o) {
    Release();
    lease_ = std::move(o.lease_);
    rows_ = o.rows_;
    epoch_ = o.epoch_;
    tensors_ = std::move(o.tensors_);
    event_ = o.event_;
    stream_ = o.stream_;
  }
  return *this;
}
Batch::~Batch() { Release(); }

void Batch::Release() { Release(nullptr); }  // stream 0: the legacy default stream

void Batch::ReleaseAfterDeviceIdle() {
  if (lease_ != nullptr) lease_->Release(ConsumerStreams::Unknown());
  lease_.reset();
}
void Batch::Release(void* consumer_stream) { ReleaseAfter({consumer_stream}); }
void Batch::ReleaseAfter(const std::vector<void*>& consumer_streams) {
  if (lease_ != nullptr) lease_->Release(ConsumerStreams::Of(consumer_streams));
  lease_.reset();
}

void Batch::FenceAfter(void* consumer_stream) {
  if (lease_ != nullptr) lease_->Fence(ConsumerStreams::Of({consumer_stream}));
}

const Tensor* Batch::Find(const std::string& name) const {
  for (const Tensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<std::unique_ptr<Loader>> Loader::Create(Dataset dataset,
                                                       const LoaderOptions& options) {
  ASSIGN_OR_RETURN(ResolvedOptions r, ResolveOptions(dataset, options));
  std::string device_note;
  ASSIGN_OR_RETURN(std::shared_ptr<DeviceContext> ctx, OpenDeviceContext(r.o.device, &device_note));
  std::unique_ptr<Backend> backend;
  std::string cache_note, path_note;
  if (r.o.cache.enabled) {
    ASSIGN_OR_RETURN(backend, CreateResidentLoader(dataset, r, ctx, device_note, &cache_note));
    path_note = "resident";
  }
  if (backend == nullptr) {
    r.o.cache = CacheOptions();
    absl::StatusOr<std::unique_ptr<ShardFiles>> files =
        r.o.force_streaming ? absl::FailedPreconditionError("force_streaming")
                            : ShardFiles::Open(dataset);
    RETURN_IF_ERROR(CheckResumePath(r, files.ok() ? "planned" : "streaming"));
    if (files.ok()) {
      ASSIGN_OR_RETURN(backend, CreatePlannedLoader(dataset, *std::move(files), r, ctx,
                                                    device_note));
      path_note = "planned";
    } else if (absl::IsFailedPrecondition(files.status())) {
      ASSIGN_OR_RETURN(backend, CreateStreamingLoader(dataset, r, ctx, device_note));
      path_note = absl::StrCat("streaming (", files.status().message(), ")");
    } else {
      return files.status();
    }
  }
  backend->notes = r.notes;
  backend->cache_note = std::move(cache_note);
  backend->path_note = std::move(path_note);
  return std::unique_ptr<Loader>(new Loader(std::move(backend)));
}

Loader::Loader(std::unique_ptr<Backend> backend) : backend_(std::move(backend)) {}
Loader::~Loader() = default;
absl::StatusOr<Batch> Loader::Next(absl::Duration timeout) {
  return CheckEpochRows(backend_->Next(timeout));
}

absl::StatusOr<Batch> Loader::CheckEpochRows(absl::StatusOr<Batch> b) {
  std::lock_guard<std::mutex> lock(epoch_mu_);
  if (!failed_.ok()) return failed_;
  if (!b.ok() && !absl::IsOutOfRange(b.status())) return b;
  if (!b.ok() || b->epoch() != epoch_) {
    if (epoch_batches_ > 0 && epoch_rows_ == 0) {
      failed_ = absl::DataLossError(absl::StrCat(
          "epoch ", epoch_, ": every record was skipped (skip_corrupt; ", epoch_batches_,
          " batch", epoch_batches_ == 1 ? "" : "es", " of 0 rows, ", stats().skipped_records,
          " records skipped so far): nothing of this epoch could be read; run `shardfeed check` "
          "on the shards, or read without skip_corrupt to see the first error"));
      return failed_;
    }
    if (b.ok()) {
      epoch_ = b->epoch();
      epoch_batches_ = 0;
      epoch_rows_ = 0;
    }
  }
  if (b.ok()) {
    ++epoch_batches_;
    epoch_rows_ += b->size();
  }
  return b;
}
LoaderStats Loader::stats() const { return backend_->stats(); }
const std::vector<FeatureSpec>& Loader::features() const { return backend_->features(); }
int64_t Loader::batches_per_epoch() const { return backend_->batches_per_epoch(); }
int Loader::device() const { return backend_->device(); }
const std::string& Loader::device_note() const { return backend_->device_note(); }
const std::string& Loader::cache_note() const { return backend_->cache_note; }
const std::string& Loader::path_note() const { return backend_->path_note; }
const std::vector<std::string>& Loader::notes() const { return backend_->notes; }
LoaderState Loader::state() const { return backend_->state(); }

}  // namespace shardfeed
