// ExtentTable: every shard of a dataset cut, from its index, into extents:
// runs of whole, consecutive records of about `target_bytes` (never a
// record split; a record larger than the target is an extent of its own).
// Extents are the unit a remote shard is fetched and cached in
// (reader/extent_prefetcher.h) and the blocks shuffle="quasi" permutes
// (reader/epoch_plan.h), so the quasi order depends only on the indexes and
// the extent size: a dataset reads the same from disk and from a bucket.
//
// Ids: extents are numbered over the dataset, shards in dataset order,
// extents in file order. Immutable after Build; thread-safe to read.
#ifndef SHARDFEED_READER_EXTENT_TABLE_H_
#define SHARDFEED_READER_EXTENT_TABLE_H_

#include <cstdint>
#include <vector>

#include "reader/dataset.h"

namespace shardfeed {

// Default extent size: AWS's byte-range guidance is 8-16 MB per request.
inline constexpr uint64_t kDefaultExtentBytes = uint64_t{8} << 20;

struct Extent {
  size_t shard = 0;
  uint64_t offset = 0;        // of its first record in the shard
  uint64_t length = 0;        // through the end of its last record
  int64_t first_record = 0;   // dataset index of its first record
  int64_t records = 0;
};

class ExtentTable {
 public:
  ExtentTable() = default;
  // Every shard of `dataset` must have its index (records == index size).
  static ExtentTable Build(const Dataset& dataset, uint64_t target_bytes);

  size_t size() const { return extents_.size(); }
  const Extent& operator[](size_t id) const { return extents_[id]; }
  // The extent holding dataset record `record`.
  size_t ExtentOfRecord(int64_t record) const;
  // The extent of `shard` holding byte `offset`, or -1 when no extent does
  // (before the first record, past the last).
  int64_t ExtentAt(size_t shard, uint64_t offset) const;
  // Records per extent, in id order (EpochOrder's quasi blocks).
  std::vector<int64_t> RecordCounts() const;
  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t max_extent_bytes() const { return max_bytes_; }

 private:
  std::vector<Extent> extents_;
  std::vector<int64_t> first_records_;  // per extent, for ExtentOfRecord
  std::vector<size_t> shard_first_;     // per shard + 1: its first extent id
  uint64_t total_bytes_ = 0, max_bytes_ = 0;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXTENT_TABLE_H_
