#include "reader/extent_plan.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "record/cache/extent_cache.h"

namespace shardfeed {

std::shared_ptr<const EpochOrder> PlannedEpochOrder(const ResolvedOptions& r,
                                                    const std::vector<int64_t>& shard_records,
                                                    const std::vector<int64_t>& extent_records,
                                                    int64_t epoch) {
  return std::make_shared<const EpochOrder>(r.mode, r.o.seed, epoch, shard_records,
                                            r.o.shuffle_buffer, &extent_records);
}

uint64_t ExtentBytesOf(const ResolvedOptions& r) {
  return r.o.remote.extent_bytes > 0 ? r.o.remote.extent_bytes : kDefaultExtentBytes;
}

ExtentPlan::ExtentPlan(const Dataset& dataset, const ResolvedOptions& r)
    : r_(r), seq_(r_), table_(ExtentTable::Build(dataset, ExtentBytesOf(r))),
      extent_records_(table_.RecordCounts()) {
  for (const ShardEntry& s : dataset.shards) shard_records_.push_back(s.records);
}

bool ExtentPlan::BatchRecords(uint64_t g, std::shared_ptr<const EpochOrder>* order,
                              int64_t* order_epoch, std::vector<int64_t>* records,
                              uint64_t* position, int64_t* epoch) const {
  PlannedBatch b;
  if (!seq_.Locate(g, &b)) return false;
  if (*order == nullptr || *order_epoch != b.epoch) {
    *order = PlannedEpochOrder(r_, shard_records_, extent_records_, b.epoch);
    *order_epoch = b.epoch;
  }
  const PositionRange range =
      RankBatch(b.start, r_.total_records, r_.o.world_size, r_.o.rank, r_.o.batch_size, b.k);
  records->resize(range.rows);
  for (int64_t i = 0; i < range.rows; ++i) (*records)[i] = (*order)->RecordAt(range.first + i);
  *position = static_cast<uint64_t>(b.epoch) * r_.total_records + range.first;
  *epoch = b.epoch;
  return true;
}

bool ExtentPlan::BatchExtents(uint64_t g, std::vector<uint32_t>* extents, int64_t* epoch,
                              uint64_t* position) {
  if (!BatchRecords(g, &walk_order_, &walk_epoch_, &walk_records_, position, epoch)) {
    return false;
  }
  extents->clear();
  for (int64_t rec : walk_records_) {
    extents->push_back(static_cast<uint32_t>(table_.ExtentOfRecord(rec)));
  }
  std::sort(extents->begin(), extents->end());
  extents->erase(std::unique(extents->begin(), extents->end()), extents->end());
  return true;
}

uint64_t ExtentPlan::NextEpochUse(size_t extent, int64_t epoch) {
  const int64_t next = epoch + 1;
  if (r_.o.epochs > 0 && next >= r_.o.epochs) return kNoNextUse;
  std::lock_guard<std::mutex> lock(next_mu_);
  if (next_epoch_ != next) {
    std::shared_ptr<const EpochOrder> order =
        PlannedEpochOrder(r_, shard_records_, extent_records_, next);
    next_use_.assign(table_.size(), kNoNextUse);
    const uint64_t base = static_cast<uint64_t>(next) * r_.total_records;
    for (int64_t p = r_.total_records - 1; p >= 0; --p) {
      next_use_[table_.ExtentOfRecord(order->RecordAt(p))] = base + p;
    }
    next_epoch_ = next;
  }
  return extent < next_use_.size() ? next_use_[extent] : kNoNextUse;
}

uint64_t ExtentPlan::WorkingSetBytes(int batches) {
  std::shared_ptr<const EpochOrder> order;
  int64_t order_epoch = -1, first_epoch = -1, epoch = 0;
  std::vector<int64_t> records;
  std::deque<std::vector<uint32_t>> window;
  std::unordered_map<uint32_t, int> uses;  // extent -> batches of the window reading it
  uint64_t bytes = 0, most = 0, position = 0;
  for (uint64_t g = 0; BatchRecords(g, &order, &order_epoch, &records, &position, &epoch); ++g) {
    if (first_epoch < 0) first_epoch = epoch;
    if (epoch > first_epoch + 1) break;
    std::vector<uint32_t> ext;
    for (int64_t rec : records) ext.push_back(static_cast<uint32_t>(table_.ExtentOfRecord(rec)));
    std::sort(ext.begin(), ext.end());
    ext.erase(std::unique(ext.begin(), ext.end()), ext.end());
    for (uint32_t e : ext) {
      if (uses[e]++ == 0) bytes += table_[e].length;
    }
    window.push_back(std::move(ext));
    if (static_cast<int>(window.size()) > batches) {
      for (uint32_t e : window.front()) {
        if (--uses[e] == 0) bytes -= table_[e].length;
      }
      window.pop_front();
    }
    most = std::max(most, bytes);
  }
  return most;
}

}  // namespace shardfeed
