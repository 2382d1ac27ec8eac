// SlotRing: the batch memory every loader path fills and delivers from, and
// the lease that keeps a delivered slot away from reuse.
//
// A slot holds one batch: per fixed-shape feature its rows (host memory,
// pinned when staged for a GPU copy; device memory on a GPU), transformed
// outputs, variable-length values + offsets, and record indices. A slot
// goes Free -> Filling (its one filler owns it) -> Ready (seq = delivery
// number) -> InUse (a Batch holds it) -> Free (the Batch is released, with
// a ConsumerFence so the refill waits for the consumer's GPU work).
//
// Ownership: a std::shared_ptr shared by the loader and every Batch (each
// holds a lease), so batches may outlive the loader; the ring also shares
// the DeviceContext, so Batch::cuda_stream() stays valid. The destructor
// waits for the copy stream and every slot's consumer fence (the streams
// the last releases named, stream 0 for a release naming none, or the
// whole device for unknown consumers) before freeing memory.
//
// Threading: `mu` guards every slot's state/seq/rows/epoch/error and the
// slot list; a Slot* stays valid for the ring's life (growth appends).
// Memory of a slot in Filling is touched only by its filler.
#ifndef SHARDFEED_READER_SLOT_RING_H_
#define SHARDFEED_READER_SLOT_RING_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpu/cuda_resources.h"
#include "reader/aligned_host_memory.h"
#include "reader/consumer_fence.h"
#include "reader/device_context.h"
#include "reader/loader.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"

namespace shardfeed {

namespace internal {
// Keeps a delivered batch's memory away from reuse until Release.
class BatchLease {
 public:
  virtual ~BatchLease() = default;
  virtual void Release(const ConsumerStreams& consumers) = 0;
  // Fences the slot's refill after `consumers` now, without releasing it.
  virtual void Fence(const ConsumerStreams& consumers) = 0;
};
}  // namespace internal

// What each slot holds.
struct SlotLayout {
  std::vector<FeatureSpec> features;
  std::vector<FeatureTransform> transforms;
  std::vector<int> transform_of;  // per feature: index into transforms, or -1
  std::vector<bool> present;      // per feature: held by this ring's slots
  // Fixed rows are written on the host (pinned memory with a GPU) and then
  // copied; false: written straight into device memory (resident gathers).
  bool staged = true;
  int64_t batch_size = 1;
  bool record_index = false;
  bool index_on_device = false;  // a pinned + device copy of the indices
};

// The layout every reading path starts from: all of the options' features
// (with their transforms) in every slot, staged on the host, batch_size rows.
SlotLayout LayoutFor(const ResolvedOptions& r);

class SlotRing : public std::enable_shared_from_this<SlotRing> {
 public:
  enum class State { kFree, kFilling, kReady, kInUse };
  struct Slot {
    explicit Slot(GpuOps* ops) : fence(ops) {}
    State state = State::kFree;
    uint64_t seq = 0;
    int64_t rows = 0;
    int64_t epoch = 0;
    absl::Status error;        // a failed fill, delivered in its turn
    bool copy_recorded = false;
    ConsumerFence fence;
    // Memory, per feature of the layout.
    std::vector<char*> rows_host;                         // fixed rows on the host
    std::vector<AlignedVector<char>> heap;                // host path
    std::vector<gpu::PinnedBuffer> pinned;                // GPU, staged
    std::vector<gpu::DeviceBuffer> device;                // GPU
    std::vector<gpu::DeviceBuffer> transformed_device;
    std::vector<AlignedVector<char>> transformed_host;
    std::vector<AlignedVector<char>> var_values;          // joined values of the rows
    std::vector<AlignedVector<int64_t>> var_offsets;
    AlignedVector<int64_t> index;                         // record indices
    gpu::PinnedBuffer index_pinned;
    gpu::DeviceBuffer index_device;
    gpu::CudaEvent copy_start, ready;                     // GPU
  };

  // ctx: null for host memory.
  static absl::StatusOr<std::shared_ptr<SlotRing>> Create(SlotLayout layout, int slots,
                                                          std::shared_ptr<DeviceContext> ctx);
  ~SlotRing();

  // Bytes one slot of `layout` allocates (device memory on a GPU, else host
  // memory): fixed rows, transformed outputs, device record indices.
  static int64_t BytesPerSlot(const SlotLayout& layout);

  const SlotLayout& layout() const { return layout_; }
  DeviceContext* context() const { return ctx_.get(); }
  int device() const { return ctx_ ? ctx_->ordinal : -1; }

  std::mutex mu;
  std::condition_variable cv;
  // With mu held.
  Slot* FindFreeLocked(int* index);
  int CountLocked(State s) const;
  Slot* FindReadyLocked(uint64_t seq, int* index);
  size_t size_locked() const { return slots_.size(); }
  Slot* slot_locked(int k) { return slots_[k].get(); }

  // Adds a slot (grow_ring); takes mu itself.
  absl::Status Grow();
  // FAILED_PRECONDITION naming the remedy, when the consumer holds every slot.
  absl::Status AllHeldError();

  // The filler of slot `s`, before writing into it: the consumer's GPU work
  // on its last batch and the last copy out of its pinned memory are done
  // (or queued before anything on the copy stream).
  absl::Status PrepareFill(Slot* s);

  // The consumer's wait for the batch numbered `seq` (the paths that fill
  // slots on their own threads). When the consumer holds every slot, it
  // first waits until finished() or fillers_wait() (the fillers wait for a
  // free slot) or a slot is released: at the end of data it returns -1
  // (never "all held"); otherwise it adds a slot (grow) or returns
  // FAILED_PRECONDITION. DEADLINE_EXCEEDED after `timeout`. Returns with
  // `*lock` (on mu) held: the slot's index, or -1 once finished() says no
  // such batch will come. Both predicates are called with mu held.
  absl::StatusOr<int> AwaitReady(uint64_t seq, absl::Duration timeout, bool grow,
                                 const std::function<bool()>& finished,
                                 const std::function<bool()>& fillers_wait,
                                 PipelineCounters* counters, std::unique_lock<std::mutex>* lock);

  // Marks slot k InUse (mu held by the caller) and returns its Batch.
  Batch DeliverLocked(int k);
  // The tensors of slot s holding `rows` rows.
  std::vector<Tensor> Describe(Slot* s, int64_t rows);

  // A lease for slot k that also keeps `inner` (a batch this one extends).
  std::shared_ptr<internal::BatchLease> Lease(int k, Batch inner = Batch());
  void Release(int k, const ConsumerStreams& consumers);
  void Fence(int k, const ConsumerStreams& consumers);  // slot k stays InUse

 private:
  SlotRing(SlotLayout layout, std::shared_ptr<DeviceContext> ctx)
      : layout_(std::move(layout)), ctx_(std::move(ctx)) {}
  absl::Status Allocate(Slot* slot);

  const SlotLayout layout_;
  std::shared_ptr<DeviceContext> ctx_;
  std::vector<std::unique_ptr<Slot>> slots_;  // guarded by mu
};

// Drops the rows of slot `s` whose ok[row] is 0, keeping the order (fixed
// rows and record indices move down), and joins the variable-length values
// of the kept rows (var_rows[feature][row]) into the slot. Returns the rows
// kept.
int64_t CompactRows(const std::vector<FeatureSpec>& spec, const std::vector<char>& ok,
                    int64_t rows, std::vector<std::vector<std::string>>* var_rows,
                    SlotRing::Slot* s);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_SLOT_RING_H_
