#include "reader/resident_loader.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gpu/cuda_resources.h"
#include "gpu/cuda_status.h"
#include "gpu/device.h"
#include "gpu/gather_kernel.h"
#include "gpu/image_transform_kernel.h"
#include "reader/feature_transforms.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Mb(int64_t bytes) { return absl::StrFormat("%.1f MB", bytes / 1e6); }

// The output slots, shared with Batches (which may outlive the loader).
class SlotRing : public SlotOwner {
 public:
  struct Slot {
    bool held = false;
    // Per output feature (resident ones only): gathered rows, transformed rows.
    std::vector<gpu::DeviceBuffer> device, transformed_device;
    std::vector<std::unique_ptr<char[]>> host, transformed_host;
    std::vector<int64_t> index;       // record indices of this batch (host)
    gpu::PinnedBuffer index_pinned;   // partial mode: copy source of the indices
    gpu::DeviceBuffer index_device;   // partial mode: the indices on the device
    gpu::CudaEvent ready, released;
    bool released_pending = false;
  };
  std::mutex mu;
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
    s.held = false;
  }
};

}  // namespace

class ResidentLoader::Impl {
 public:
  Impl(const Dataset& ds, const LoaderOptions& o) : ds_(ds), o_(o) {}

  ~Impl() {
    stream_loader_.reset();
    // Kernels may still read the table: let them finish before freeing it.
    if (device_ >= 0 && stream_.get() != nullptr) cudaStreamSynchronize(stream_.get());
  }

  // False (and *note) when the table does not fit.
  absl::StatusOr<bool> Start(std::string* note) {
    start_ = Now();
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
    RETURN_IF_ERROR(ChooseResidentFeatures());

    const int64_t n = ds_.total_records();
    int64_t row_bytes = 0;
    for (size_t f : resident_) row_bytes += o_.features[f].row_bytes();
    const int64_t table_bytes = n * row_bytes;
    std::vector<std::string> names;
    for (size_t f : resident_) names.push_back(o_.features[f].name);

    if (o_.device >= 0) {
      absl::Status s = StartGpu();
      if (!s.ok()) {
        device_note_ = absl::StrCat("GPU ", o_.device, " unavailable (", s.message(),
                                    "); resident table and batches in host memory");
        device_ = -1;
      }
    }
    int64_t budget = o_.cache.budget_bytes;
    if (budget <= 0) {
      if (device_ >= 0) {
        size_t free_bytes = 0, total = 0;
        RETURN_IF_CUDA_ERROR(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
        budget = static_cast<int64_t>(free_bytes * 0.8);
      } else {
        budget = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / 4;
      }
    }
    const std::string where = device_ >= 0 ? absl::StrCat("GPU ", device_) : "host memory";
    if (table_bytes > budget) {
      *note = absl::StrCat("resident cache: ", absl::StrJoin(names, ", "), " of ", n,
                           " records need ", Mb(table_bytes), ", more than the budget of ",
                           Mb(budget), " in ", where, "; streaming instead");
      return false;
    }
    RETURN_IF_ERROR(AllocateTable(n));
    RETURN_IF_ERROR(LoadTable());
    stats_.cache_bytes = table_bytes;
    stats_.cache_load_seconds = Now() - start_;
    *note = absl::StrCat("resident cache: ", absl::StrJoin(names, ", "), " of ", valid_.size(),
                         " records (", Mb(table_bytes), ") in ", where, ", loaded in ",
                         absl::StrFormat("%.2f s", stats_.cache_load_seconds),
                         streamed_.empty() ? "" : "; the other features stream");
    if (!streamed_.empty()) RETURN_IF_ERROR(StartStreaming());
    const int64_t per_rank = static_cast<int64_t>(valid_.size()) / o_.world_size;
    batches_per_epoch_ =
        streamed_.empty()
            ? (o_.drop_remainder ? per_rank / o_.batch_size
                                 : (per_rank + o_.batch_size - 1) / o_.batch_size)
            : stream_loader_->batches_per_epoch();
    RETURN_IF_ERROR(AllocateSlots());
    return true;
  }

  absl::StatusOr<Batch> Next(absl::Duration timeout) {
    if (!final_status_.ok()) return final_status_;
    absl::StatusOr<Batch> b = streamed_.empty() ? NextResident() : NextJoined(timeout);
    if (!b.ok() && !absl::IsFailedPrecondition(b.status()) &&
        !absl::IsDeadlineExceeded(b.status())) {
      final_status_ = b.status();
    }
    return b;
  }

  LoaderStats stats() const {
    LoaderStats s = stream_loader_ ? stream_loader_->stats() : LoaderStats();
    s.batches = stats_.batches;
    s.records = stats_.records;
    s.wall_seconds = Now() - start_;
    s.cache_bytes = stats_.cache_bytes;
    s.cache_load_seconds = stats_.cache_load_seconds;
    s.transform_seconds += stats_.transform_seconds;
    return s;
  }
  const std::vector<FeatureSpec>& features() const { return o_.features; }
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  int device() const { return device_; }
  const std::string& device_note() const { return device_note_; }

 private:
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
            "cache feature '", name, "' is variable-length bytes: only fixed-shape features can "
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

  absl::Status AllocateTable(int64_t n) {
    table_device_.resize(o_.features.size());
    table_host_.resize(o_.features.size());
    for (size_t f : resident_) {
      const size_t bytes = std::max<size_t>(1, n * o_.features[f].row_bytes());
      if (device_ >= 0) {
        ASSIGN_OR_RETURN(table_device_[f], gpu::DeviceBuffer::Create(bytes));
      } else {
        table_host_[f].reset(new char[bytes]);
      }
    }
    if (device_ >= 0 && streamed_.empty()) {
      ASSIGN_OR_RETURN(epoch_index_device_, gpu::DeviceBuffer::Create(std::max<int64_t>(8, n * 8)));
    }
    return absl::OkStatus();
  }

  char* TableRow(size_t f, int64_t index) {
    const size_t rb = o_.features[f].row_bytes();
    return (device_ >= 0 ? static_cast<char*>(table_device_[f].get()) : table_host_[f].get()) +
           index * rb;
  }

  // One pass of the streaming pipeline, in dataset order, into the table.
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
    const int64_t n = ds_.total_records();
    std::vector<char> seen(n, 0);
    for (;;) {
      absl::StatusOr<Batch> b = loader->Next();
      if (absl::IsOutOfRange(b.status())) break;
      RETURN_IF_ERROR(b.status());
      const Tensor* index = b->Find(kRecordIndexTensor);
      const int64_t* idx = static_cast<const int64_t*>(index->data);
      const int64_t rows = b->size();
      bool contiguous = true;
      for (int64_t i = 0; i < rows; ++i) {
        if (idx[i] < 0 || idx[i] >= n) {
          return absl::InternalError(absl::StrCat("record index ", idx[i], " outside [0, ", n, ")"));
        }
        seen[idx[i]] = 1;
        contiguous = contiguous && idx[i] == idx[0] + i;
      }
      for (size_t k = 0; k < resident_.size(); ++k) {
        const size_t f = resident_[k];
        const char* src = static_cast<const char*>(b->tensors()[k].data);
        const size_t rb = o_.features[f].row_bytes();
        for (int64_t i = 0; i < rows;) {
          const int64_t run = contiguous ? rows : 1;
          if (device_ >= 0) {
            RETURN_IF_CUDA_ERROR(cudaMemcpy(TableRow(f, idx[i]), src + i * rb, run * rb,
                                            cudaMemcpyHostToDevice),
                                 "cudaMemcpy into the resident table");
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
    skipped_at_load_ = loader->stats().skipped_records;
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
    if (stream_loader_->device() != device_) {
      return absl::InternalError("the streamed and resident features landed on different devices");
    }
    return absl::OkStatus();
  }

  absl::Status AllocateSlots() {
    ring_ = std::make_shared<SlotRing>();
    ring_->gpu = device_ >= 0;
    ring_->slots.resize(o_.prefetch);
    for (SlotRing::Slot& slot : ring_->slots) RETURN_IF_ERROR(AllocateSlot(&slot));
    return absl::OkStatus();
  }

  absl::Status AllocateSlot(SlotRing::Slot* slot_ptr) {
    SlotRing::Slot& slot = *slot_ptr;
    const size_t nf = o_.features.size();
    {
      slot.device.resize(nf);
      slot.transformed_device.resize(nf);
      slot.host.resize(nf);
      slot.transformed_host.resize(nf);
      slot.index.assign(o_.batch_size, 0);
      if (device_ >= 0) {
        ASSIGN_OR_RETURN(slot.ready, gpu::CudaEvent::Create());
        ASSIGN_OR_RETURN(slot.released, gpu::CudaEvent::Create());
        if (!streamed_.empty()) {
          ASSIGN_OR_RETURN(slot.index_pinned, gpu::PinnedBuffer::Create(o_.batch_size * 8));
          ASSIGN_OR_RETURN(slot.index_device, gpu::DeviceBuffer::Create(o_.batch_size * 8));
        }
      }
      for (size_t f : resident_) {
        const size_t bytes = std::max<size_t>(1, o_.batch_size * o_.features[f].row_bytes());
        const int t = transform_of_[f];
        const size_t out =
            t < 0 ? 0 : std::max<size_t>(1, o_.batch_size *
                                                 o_.transforms[t].transform.output_bytes_per_image());
        if (device_ >= 0) {
          ASSIGN_OR_RETURN(slot.device[f], gpu::DeviceBuffer::Create(bytes));
          if (t >= 0) {
            ASSIGN_OR_RETURN(slot.transformed_device[f], gpu::DeviceBuffer::Create(out));
          }
        } else {
          slot.host[f].reset(new char[bytes]);
          if (t >= 0) slot.transformed_host[f].reset(new char[out]);
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status AllHeld() const {
    return absl::FailedPreconditionError(absl::StrCat(
        "all ", ring_->slots.size(), " batch slots are held by unreleased batches: release one "
        "(or raise prefetch) before asking for the next"));
  }

  // OK when a slot is free (after adding one, with grow_ring).
  absl::Status HaveFreeSlot() {
    {
      std::lock_guard<std::mutex> lock(ring_->mu);
      for (const SlotRing::Slot& s : ring_->slots) {
        if (!s.held) return absl::OkStatus();
      }
    }
    if (!o_.grow_ring) return AllHeld();
    SlotRing::Slot extra;
    if (device_ >= 0) RETURN_IF_CUDA_ERROR(cudaSetDevice(device_), "cudaSetDevice");
    RETURN_IF_ERROR(AllocateSlot(&extra));
    std::lock_guard<std::mutex> lock(ring_->mu);
    ring_->slots.push_back(std::move(extra));
    return absl::OkStatus();
  }

  // A free slot (held batches only shrink the ring), or FAILED_PRECONDITION
  // when the consumer holds them all.
  absl::StatusOr<int> TakeSlot() {
    RETURN_IF_ERROR(HaveFreeSlot());
    std::lock_guard<std::mutex> lock(ring_->mu);
    const size_t n = ring_->slots.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t k = (next_slot_ + i) % n;
      if (ring_->slots[k].held) continue;
      ring_->slots[k].held = true;
      next_slot_ = k + 1;
      return static_cast<int>(k);
    }
    return AllHeld();
  }

  // Starts an epoch: the permutation every rank shares, this rank's part.
  absl::Status StartEpoch() {
    if (device_ >= 0) {
      // The previous epoch's gathers read epoch_index_device_.
      RETURN_IF_CUDA_ERROR(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
    }
    std::vector<int64_t> order = valid_;
    if (o_.shuffle) {
      std::mt19937_64 rng(o_.seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(epoch_) * 7919 + 1);
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
    }
    const int64_t per_rank = static_cast<int64_t>(order.size()) / o_.world_size;
    epoch_order_.assign(order.begin() + o_.rank * per_rank,
                        order.begin() + (o_.rank + 1) * per_rank);
    if (device_ >= 0 && !epoch_order_.empty()) {
      RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(epoch_index_device_.get(), epoch_order_.data(),
                                           epoch_order_.size() * 8, cudaMemcpyHostToDevice,
                                           stream_.get()),
                           "cudaMemcpyAsync of the epoch's indices");
    }
    epoch_pos_ = 0;
    epoch_batches_ = 0;
    return absl::OkStatus();
  }

  absl::StatusOr<Batch> NextResident() {
    if (!epoch_started_ || epoch_batches_ >= batches_per_epoch_) {
      if (epoch_started_) ++epoch_;
      if (o_.epochs > 0 && epoch_ >= o_.epochs) {
        return absl::OutOfRangeError("end of data: all epochs delivered");
      }
      epoch_started_ = true;
      RETURN_IF_ERROR(StartEpoch());
      if (batches_per_epoch_ == 0) {
        return absl::OutOfRangeError("end of data: no complete batch in an epoch");
      }
    }
    const int64_t rows =
        std::min<int64_t>(o_.batch_size, static_cast<int64_t>(epoch_order_.size()) - epoch_pos_);
    ASSIGN_OR_RETURN(int k, TakeSlot());
    SlotRing::Slot& slot = ring_->slots[k];
    std::copy(epoch_order_.begin() + epoch_pos_, epoch_order_.begin() + epoch_pos_ + rows,
              slot.index.begin());
    const int64_t* idx_device =
        device_ >= 0 ? static_cast<const int64_t*>(epoch_index_device_.get()) + epoch_pos_
                     : nullptr;
    Batch b;
    absl::Status s = FillResident(k, rows, idx_device, &b);
    if (!s.ok()) {
      ring_->Release(k, nullptr);
      return s;
    }
    epoch_pos_ += rows;
    ++epoch_batches_;
    return b;
  }

  absl::StatusOr<Batch> NextJoined(absl::Duration timeout) {
    // A free slot first, so a held ring does not consume a streamed batch.
    RETURN_IF_ERROR(HaveFreeSlot());
    ASSIGN_OR_RETURN(Batch streamed, stream_loader_->Next(timeout));
    const Tensor* index = streamed.Find(kRecordIndexTensor);
    const int64_t rows = streamed.size();
    ASSIGN_OR_RETURN(int k, TakeSlot());
    SlotRing::Slot& slot = ring_->slots[k];
    std::memcpy(slot.index.data(), index->data, rows * 8);
    const int64_t* idx_device = nullptr;
    absl::Status s;
    if (device_ >= 0) {
      s = CopyIndices(&slot, rows, static_cast<cudaEvent_t>(streamed.cuda_event()));
      idx_device = static_cast<const int64_t*>(slot.index_device.get());
    }
    Batch b;
    if (s.ok()) s = FillResident(k, rows, idx_device, &b);
    if (!s.ok()) {
      ring_->Release(k, nullptr);
      return s;
    }
    // Streamed tensors first, then resident ones, in spec order overall.
    std::vector<Tensor> tensors;
    size_t r = 0;
    for (size_t f = 0; f < o_.features.size(); ++f) {
      const bool resident = std::find(resident_.begin(), resident_.end(), f) != resident_.end();
      if (resident) {
        tensors.push_back(b.tensors_[r++]);
        continue;
      }
      for (const Tensor& t : streamed.tensors()) {
        if (t.name == o_.features[f].name || t.name == o_.features[f].name + "/offsets") {
          tensors.push_back(t);
        }
      }
    }
    if (o_.record_index) tensors.push_back(b.tensors_.back());
    b.tensors_ = std::move(tensors);
    b.epoch_ = streamed.epoch();
    b.inner_ = std::make_unique<Batch>(std::move(streamed));
    return b;
  }

  absl::Status CopyIndices(SlotRing::Slot* slot, int64_t rows, cudaEvent_t streamed_ready) {
    cudaStream_t s = stream_.get();
    // The pinned index buffer of this slot was last read by a copy queued on
    // this stream before the previous use of the slot's outputs completed.
    RETURN_IF_CUDA_ERROR(cudaEventSynchronize(slot->ready.get()), "cudaEventSynchronize");
    std::memcpy(slot->index_pinned.get(), slot->index.data(), rows * 8);
    if (streamed_ready != nullptr) {
      RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(s, streamed_ready, 0), "cudaStreamWaitEvent");
    }
    RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(slot->index_device.get(), slot->index_pinned.get(),
                                         rows * 8, cudaMemcpyHostToDevice, s),
                         "cudaMemcpyAsync of batch indices");
    return absl::OkStatus();
  }

  // Gathers (and transforms) the resident features of slot k's rows into
  // the slot and describes them in *b: one tensor per resident feature in
  // resident_ order, then "__index" when asked for.
  absl::Status FillResident(int k, int64_t rows, const int64_t* idx_device, Batch* b) {
    SlotRing::Slot& slot = ring_->slots[k];
    const uint64_t first_sample = samples_;
    if (device_ >= 0) {
      cudaStream_t s = stream_.get();
      if (slot.released_pending) {
        RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(s, slot.released.get(), 0), "cudaStreamWaitEvent");
        slot.released_pending = false;
      }
      for (size_t f : resident_) {
        RETURN_IF_CUDA_ERROR(gpu::LaunchGatherRows(table_device_[f].get(),
                                                   o_.features[f].row_bytes(), idx_device, rows,
                                                   slot.device[f].get(), s),
                             "gather kernel launch");
        if (transform_of_[f] >= 0) {
          RETURN_IF_CUDA_ERROR(
              gpu::LaunchImageTransform(o_.transforms[transform_of_[f]].transform,
                                        static_cast<const uint8_t*>(slot.device[f].get()), rows,
                                        first_sample, slot.transformed_device[f].get(), s),
              "image transform kernel launch");
        }
      }
      RETURN_IF_CUDA_ERROR(cudaEventRecord(slot.ready.get(), s), "cudaEventRecord");
      b->event_ = slot.ready.get();
      b->stream_ = s;
    } else {
      const double t0 = Now();
      for (size_t f : resident_) {
        gpu::GatherRowsOnHost(table_host_[f].get(), o_.features[f].row_bytes(), slot.index.data(),
                              rows, slot.host[f].get());
        if (transform_of_[f] >= 0) {
          RETURN_IF_ERROR(gpu::TransformImagesOnHost(
              o_.transforms[transform_of_[f]].transform,
              reinterpret_cast<const uint8_t*>(slot.host[f].get()), rows, first_sample,
              slot.transformed_host[f].get()));
        }
      }
      stats_.transform_seconds += Now() - t0;
    }
    for (size_t f : resident_) {
      const FeatureSpec& spec = o_.features[f];
      const int t = transform_of_[f];
      if (t >= 0) {
        void* data = device_ >= 0 ? slot.transformed_device[f].get()
                                  : static_cast<void*>(slot.transformed_host[f].get());
        b->tensors_.push_back(
            TransformedTensor(spec.name, o_.transforms[t].transform, rows, data, device_));
        continue;
      }
      Tensor tensor;
      tensor.name = spec.name;
      tensor.dtype = spec.dtype;
      tensor.shape = {rows};
      tensor.shape.insert(tensor.shape.end(), spec.shape.begin(), spec.shape.end());
      tensor.bytes = rows * spec.row_bytes();
      tensor.device = device_;
      tensor.data = device_ >= 0 ? slot.device[f].get() : static_cast<void*>(slot.host[f].get());
      b->tensors_.push_back(std::move(tensor));
    }
    if (o_.record_index) {
      b->tensors_.push_back(Tensor{kRecordIndexTensor, DType::kInt64, {rows}, slot.index.data(),
                                   static_cast<size_t>(rows) * 8, -1});
    }
    b->ring_ = ring_;
    b->slot_ = k;
    b->rows_ = rows;
    b->epoch_ = epoch_;
    samples_ += rows;
    ++stats_.batches;
    stats_.records += rows;
    return absl::OkStatus();
  }

  Dataset ds_;
  LoaderOptions o_;
  int device_ = -1;
  std::string device_note_;
  gpu::CudaStream stream_;
  std::vector<int> transform_of_;
  std::vector<size_t> resident_, streamed_;  // feature positions in o_.features
  std::vector<gpu::DeviceBuffer> table_device_;          // per feature (resident)
  std::vector<std::unique_ptr<char[]>> table_host_;      // per feature (resident)
  std::vector<int64_t> valid_;                           // loaded record indices
  int64_t skipped_at_load_ = 0;
  std::unique_ptr<Loader> stream_loader_;                // partial residency only
  std::shared_ptr<SlotRing> ring_;
  gpu::DeviceBuffer epoch_index_device_;
  std::vector<int64_t> epoch_order_;
  bool epoch_started_ = false;
  int64_t epoch_ = 0, epoch_pos_ = 0, epoch_batches_ = 0, batches_per_epoch_ = 0;
  uint64_t next_slot_ = 0;
  uint64_t samples_ = 0;
  absl::Status final_status_;
  LoaderStats stats_;
  double start_ = 0;
};

absl::StatusOr<std::unique_ptr<ResidentLoader>> ResidentLoader::Create(const Dataset& dataset,
                                                                       const LoaderOptions& options,
                                                                       std::string* note) {
  auto impl = std::make_unique<Impl>(dataset, options);
  ASSIGN_OR_RETURN(bool fits, impl->Start(note));
  if (!fits) return std::unique_ptr<ResidentLoader>();
  return std::unique_ptr<ResidentLoader>(new ResidentLoader(std::move(impl)));
}

ResidentLoader::ResidentLoader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResidentLoader::~ResidentLoader() = default;
absl::StatusOr<Batch> ResidentLoader::Next(absl::Duration timeout) {
  return impl_->Next(timeout);
}
LoaderStats ResidentLoader::stats() const { return impl_->stats(); }
const std::vector<FeatureSpec>& ResidentLoader::features() const { return impl_->features(); }
int64_t ResidentLoader::batches_per_epoch() const { return impl_->batches_per_epoch(); }
int ResidentLoader::device() const { return impl_->device(); }
const std::string& ResidentLoader::device_note() const { return impl_->device_note(); }

}  // namespace shardfeed
