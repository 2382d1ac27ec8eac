#include "reader/extent_table.h"

#include <algorithm>

namespace shardfeed {

ExtentTable ExtentTable::Build(const Dataset& dataset, uint64_t target_bytes) {
  ExtentTable t;
  int64_t record = 0;
  for (size_t s = 0; s < dataset.shards.size(); ++s) {
    t.shard_first_.push_back(t.extents_.size());
    const std::vector<IndexEntry>& index = dataset.shards[s].index;
    for (size_t i = 0; i < index.size();) {
      Extent e;
      e.shard = s;
      e.offset = index[i].offset;
      e.first_record = record + static_cast<int64_t>(i);
      uint64_t end = index[i].offset + index[i].size;
      size_t j = i + 1;
      // Whole records while the extent stays within the target (records in
      // file order; an index out of order starts a new extent).
      while (j < index.size() && index[j].offset >= end &&
             index[j].offset + index[j].size - e.offset <= target_bytes) {
        end = index[j].offset + index[j].size;
        ++j;
      }
      e.length = end - e.offset;
      e.records = static_cast<int64_t>(j - i);
      t.total_bytes_ += e.length;
      t.max_bytes_ = std::max(t.max_bytes_, e.length);
      t.extents_.push_back(e);
      t.first_records_.push_back(e.first_record);
      i = j;
    }
    record += static_cast<int64_t>(index.size());
  }
  t.shard_first_.push_back(t.extents_.size());
  return t;
}

size_t ExtentTable::ExtentOfRecord(int64_t record) const {
  return std::upper_bound(first_records_.begin(), first_records_.end(), record) -
         first_records_.begin() - 1;
}

int64_t ExtentTable::ExtentAt(size_t shard, uint64_t offset) const {
  const size_t lo = shard_first_[shard], hi = shard_first_[shard + 1];
  auto it = std::upper_bound(extents_.begin() + lo, extents_.begin() + hi, offset,
                             [](uint64_t off, const Extent& e) { return off < e.offset; });
  if (it == extents_.begin() + lo) return -1;
  --it;
  if (offset >= it->offset + it->length) return -1;
  return it - extents_.begin();
}

std::vector<int64_t> ExtentTable::RecordCounts() const {
  std::vector<int64_t> counts;
  counts.reserve(extents_.size());
  for (const Extent& e : extents_) counts.push_back(e.records);
  return counts;
}

}  // namespace shardfeed
