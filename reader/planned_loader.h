// PlannedLoader: the Loader path for indexed, uncompressed shards. Each
// epoch's order is an EpochOrder; this rank's batch k is RankBatch(k) of it;
// worker threads each claim the next batch of the plan together with a free
// slot, fill it (BatchFiller), copy it to the device (FinishSlot) and mark
// it ready; Next() delivers slots in plan order. One hand-off per batch, no
// producer thread. Threading and errors: as Loader.
#ifndef SHARDFEED_READER_PLANNED_LOADER_H_
#define SHARDFEED_READER_PLANNED_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "reader/batch_filler.h"
#include "reader/device_context.h"
#include "reader/loader_backend.h"
#include "reader/loader_options.h"

namespace shardfeed {

// Where batch number g of this loader's sequence comes from.
struct PlannedBatch {
  int64_t epoch = 0;
  int64_t start = 0;  // the epoch segment's first position
  int64_t k = 0;      // batch of the segment
  int64_t count = 0;  // batches of the segment
};

// The batch sequence of a loader (resume point, epochs, rank layout).
class BatchSequence {
 public:
  explicit BatchSequence(const ResolvedOptions& r);
  // False past the last epoch.
  bool Locate(uint64_t g, PlannedBatch* out) const;
  // The state before batch g is delivered.
  LoaderState StateBefore(uint64_t g, uint64_t fingerprint) const;
  int64_t full_epoch_batches() const { return full_; }

 private:
  int64_t n_, batch_, epochs_;
  int world_;
  bool drop_;
  uint64_t seed_;
  int64_t first_epoch_ = 0, first_start_ = 0, first_count_ = 0, first_batches_ = 0, full_ = 0;
};

absl::StatusOr<std::unique_ptr<Loader::Backend>> CreatePlannedLoader(
    const Dataset& dataset, std::unique_ptr<ShardFiles> files, const ResolvedOptions& options,
    std::shared_ptr<DeviceContext> ctx, std::string device_note);

}  // namespace shardfeed

#endif  // SHARDFEED_READER_PLANNED_LOADER_H_
