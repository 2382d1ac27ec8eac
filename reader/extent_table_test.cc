// ExtentTable: extents of whole records within the target size, found by
// record and by byte; EpochOrder's quasi order over extents.
#include "reader/extent_table.h"

#include <algorithm>
#include <set>

#include "gtest/gtest.h"
#include "reader/epoch_plan.h"

namespace shardfeed {
namespace {

// A shard of `n` records of sizes 100, 200, 300, 100, ... back to back.
ShardEntry Shard(const std::string& path, int n) {
  ShardEntry s;
  s.path = path;
  s.records = n;
  uint64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t size = 100 * (1 + i % 3);
    s.index.push_back({offset, size});
    offset += size;
  }
  return s;
}

TEST(ExtentTableTest, WholeRecordsWithinTheTarget) {
  Dataset ds;
  ds.shards = {Shard("a", 10), Shard("b", 7)};
  ExtentTable t = ExtentTable::Build(ds, 450);
  int64_t record = 0;
  uint64_t bytes = 0;
  for (size_t id = 0; id < t.size(); ++id) {
    const Extent& e = t[id];
    EXPECT_EQ(e.first_record, record) << id;
    EXPECT_GT(e.records, 0);
    EXPECT_LE(e.length, 450u);
    const ShardEntry& s = ds.shards[e.shard];
    const int64_t local = e.first_record - (e.shard == 0 ? 0 : 10);
    EXPECT_EQ(e.offset, s.index[local].offset);
    const IndexEntry& last = s.index[local + e.records - 1];
    EXPECT_EQ(e.offset + e.length, last.offset + last.size);  // ends on a record's end
    for (int64_t r = e.first_record; r < e.first_record + e.records; ++r) {
      EXPECT_EQ(t.ExtentOfRecord(r), id);
    }
    EXPECT_EQ(t.ExtentAt(e.shard, e.offset), static_cast<int64_t>(id));
    EXPECT_EQ(t.ExtentAt(e.shard, e.offset + e.length - 1), static_cast<int64_t>(id));
    record += e.records;
    bytes += e.length;
  }
  EXPECT_EQ(record, 17);
  EXPECT_EQ(bytes, t.total_bytes());
  EXPECT_EQ(t.ExtentAt(0, 100000), -1);
}

TEST(ExtentTableTest, ARecordLargerThanTheTargetIsAnExtentAlone) {
  Dataset ds;
  ds.shards = {Shard("a", 6)};
  ExtentTable t = ExtentTable::Build(ds, 150);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t.max_extent_bytes(), 300u);
}

TEST(ExtentTableTest, QuasiOrderReadsEachExtentInAboutTwoWindows) {
  Dataset ds;
  ds.shards = {Shard("a", 300), Shard("b", 200), Shard("c", 123)};
  ExtentTable t = ExtentTable::Build(ds, 2000);  // ~10 records per extent
  const std::vector<int64_t> counts = t.RecordCounts();
  const int64_t window = 40;
  EpochOrder order(ShuffleMode::kQuasi, 3, 0, {300, 200, 123}, window, &counts);
  ASSERT_EQ(order.size(), 623);
  std::vector<int64_t> first(t.size(), -1), last(t.size(), -1);
  std::set<int64_t> seen;
  for (int64_t p = 0; p < order.size(); ++p) {
    const int64_t r = order.RecordAt(p);
    seen.insert(r);
    const size_t e = t.ExtentOfRecord(r);
    if (first[e] < 0) first[e] = p;
    last[e] = p;
  }
  EXPECT_EQ(seen.size(), 623u);  // a permutation
  for (size_t e = 0; e < t.size(); ++e) {
    EXPECT_LT(last[e] / window - first[e] / window, 2) << "extent " << e;
  }
  // Extents in a shuffled order, not the dataset's.
  EXPECT_NE(t.ExtentOfRecord(order.RecordAt(0)), 0u);
  EpochOrder other(ShuffleMode::kQuasi, 3, 1, {300, 200, 123}, window, &counts);
  int same = 0;
  for (int64_t p = 0; p < 623; ++p) same += order.RecordAt(p) == other.RecordAt(p);
  EXPECT_LT(same, 100);
}

}  // namespace
}  // namespace shardfeed
