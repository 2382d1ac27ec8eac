// ExtentPlan: a planned loader's batch sequence seen as extents
// (reader/extent_table.h): which extents each batch reads, where an extent
// is next used after an epoch, and how many bytes of extents are in use at
// once. The extent prefetcher walks it ahead of the workers; Create()
// checks a cache limit against it.
//
// Plan positions: epoch * N + the position in the epoch's order of the
// batch's first record (N: records in the dataset), increasing along the
// delivery order; ExtentCache::SetNextUse takes them.
//
// Threading: BatchExtents from one thread at a time (it keeps the current
// epoch's order); NextEpochUse and the rest are thread-safe.
#ifndef SHARDFEED_READER_EXTENT_PLAN_H_
#define SHARDFEED_READER_EXTENT_PLAN_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "reader/dataset.h"
#include "reader/epoch_plan.h"
#include "reader/extent_table.h"
#include "reader/loader_options.h"
#include "reader/planned_loader.h"

namespace shardfeed {

// The order of `epoch` on the planned path: kQuasi permutes the extents of
// `extent_records` (ExtentTable::RecordCounts), the other modes ignore it.
std::shared_ptr<const EpochOrder> PlannedEpochOrder(const ResolvedOptions& r,
                                                    const std::vector<int64_t>& shard_records,
                                                    const std::vector<int64_t>& extent_records,
                                                    int64_t epoch);

// The extent size LoaderOptions ask for (the default when 0).
uint64_t ExtentBytesOf(const ResolvedOptions& r);

class ExtentPlan {
 public:
  ExtentPlan(const Dataset& dataset, const ResolvedOptions& r);

  const ExtentTable& table() const { return table_; }
  const std::vector<int64_t>& extent_records() const { return extent_records_; }

  // The extents batch g of the sequence reads (ascending, once each), its
  // epoch and the plan position of its first record; false past the last
  // batch.
  bool BatchExtents(uint64_t g, std::vector<uint32_t>* extents, int64_t* epoch,
                    uint64_t* position);

  // The first plan position of epoch `epoch` + 1 whose record is in
  // `extent` (the epoch's whole order, every rank's; kNoNextUse past the
  // last epoch). Builds that epoch's table once (O(N)).
  uint64_t NextEpochUse(size_t extent, int64_t epoch);

  // The most bytes of the distinct extents that `batches` consecutive
  // batches read (max over this run's first two epochs): what must be
  // cached at once while that many batches are being filled. O(N).
  uint64_t WorkingSetBytes(int batches);

 private:
  bool BatchRecords(uint64_t g, std::shared_ptr<const EpochOrder>* order, int64_t* order_epoch,
                    std::vector<int64_t>* records, uint64_t* position, int64_t* epoch) const;

  const ResolvedOptions r_;
  const BatchSequence seq_;
  std::vector<int64_t> shard_records_;
  ExtentTable table_;
  std::vector<int64_t> extent_records_;
  // BatchExtents' state.
  std::shared_ptr<const EpochOrder> walk_order_;
  int64_t walk_epoch_ = -1;
  std::vector<int64_t> walk_records_;
  // NextEpochUse's table: first positions in next_epoch_.
  std::mutex next_mu_;
  int64_t next_epoch_ = -1;
  std::vector<uint64_t> next_use_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXTENT_PLAN_H_
