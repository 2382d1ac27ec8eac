// ShardFiles and BatchFiller: a dataset of more shards than the process may open files
// reads fine (descriptors opened on demand, at most kMaxOpen kept). Its own
// binary: the descriptor limit is process-wide.
#include <sys/resource.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "converter/example_encoder.h"
#include "gtest/gtest.h"
#include "reader/batch_filler.h"
#include "reader/id_dataset_test_util.h"
#include "reader/loader.h"
#include "reader/loader_options.h"
#include "reader/slot_ring.h"
#include "record/index.h"
#include "record/record_writer.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

constexpr int kShards = 200, kPerShard = 3;

std::string MakeDataset() { return testing::MakeIdDataset(kShards, kPerShard); }

// Review finding 6. Old code: one descriptor per shard for the loader's
// life; with a limit of 100 descriptors, Create failed (EMFILE).
TEST(ShardFiles, MoreShardsThanTheDescriptorLimitReadEveryRecord) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  rlimit old;
  ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
  rlimit low = old;
  low.rlim_cur = 100;
  ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &low));
  for (bool shuffle : {false, true}) {
    LoaderOptions o;
    o.features = *ParseSpec("id:int64");
    o.batch_size = 16;
    o.shuffle = shuffle;
    o.map_shards = false;  // pread every record
    auto loader = Loader::Create(*ds, o);
    ASSERT_TRUE(loader.ok()) << loader.status();
    std::set<int64_t> seen;
    for (;;) {
      auto b = (*loader)->Next();
      if (absl::IsOutOfRange(b.status())) break;
      ASSERT_TRUE(b.ok()) << b.status();
      const Tensor* id = b->Find("id");
      ASSERT_NE(nullptr, id);
      for (int64_t r = 0; r < b->size(); ++r) seen.insert(static_cast<const int64_t*>(id->data)[r]);
    }
    EXPECT_EQ(static_cast<size_t>(kShards * kPerShard), seen.size());
  }
  setrlimit(RLIMIT_NOFILE, &old);
}

TEST(ShardFiles, KeepsAtMostMaxOpenDescriptors) {
  const std::string dir = MakeDataset();
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  auto files = ShardFiles::Open(*ds);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(0u, (*files)->open_files());
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t s = 0; s < kShards; ++s) {
      auto f = (*files)->file(s);
      ASSERT_TRUE(f.ok()) << f.status();
      char head[8];
      auto got = (*f)->ReadAt(0, head, sizeof(head));
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(8u, *got);
      EXPECT_LE((*files)->open_files(), ShardFiles::kMaxOpen);
    }
  }
}

// Review finding 8: one string per coalesced run, each keeping its largest
// size ever: a batch of scattered records then one of neighbours held the
// sum of both (each filler: up to rows x 8 MB). Now one buffer holds at most
// 1.5x what one batch read. (Old code had no single buffer to measure.)
TEST(BatchFiller, ReadMemoryIsWhatOneBatchReads) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/data-0.tfrecord";
  auto w = RecordWriter::Create(path, {});
  ASSERT_TRUE(w.ok());
  for (int k = 0; k < 64; ++k) {
    ExampleEncoder e;
    const std::string blob(20 << 10, static_cast<char>('a' + k % 26));  // outlives Finish()
    e.AddBytes("blob", blob);
    ASSERT_TRUE((*w)->WriteRecord(e.Finish()).ok());
  }
  ASSERT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto ds = Dataset::Open({dir});
  ASSERT_TRUE(ds.ok()) << ds.status();
  LoaderOptions o;
  o.features = *ParseSpec("blob:bytes");
  o.batch_size = 8;
  auto r = ResolveOptions(*ds, o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto files = ShardFiles::Open(*ds);
  ASSERT_TRUE(files.ok()) << files.status();
  SlotLayout layout;
  layout.features = r->o.features;
  layout.transform_of = r->transform_of;
  layout.present.assign(layout.features.size(), true);
  layout.batch_size = o.batch_size;
  auto ring = SlotRing::Create(layout, 1, nullptr);
  ASSERT_TRUE(ring.ok()) << ring.status();
  SlotRing::Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock((*ring)->mu);
    slot = (*ring)->slot_locked(0);
  }
  BatchFiller filler(&*ds, files->get(), &*r);
  const std::vector<int64_t> scattered = {0, 2, 4, 6, 8, 10, 12, 14};  // 8 reads
  const std::vector<int64_t> neighbours = {16, 17, 18, 19, 20, 21, 22, 23};  // 1 read
  int64_t most = 0;
  for (int round = 0; round < 3; ++round) {
    for (const auto* records : {&scattered, &neighbours}) {
      FillCounters c;
      auto kept = filler.Fill(*records, slot, 0, &c);
      ASSERT_TRUE(kept.ok()) << kept.status();
      EXPECT_EQ(8, *kept);
      const std::string& values = slot->var_values[0];
      const std::vector<int64_t>& offsets = slot->var_offsets[0];
      ASSERT_EQ(9u, offsets.size());
      for (int row = 0; row < 8; ++row) {  // each row is its record's blob
        ASSERT_EQ(offsets[row] + (20 << 10), offsets[row + 1]);
        EXPECT_EQ(std::string(20 << 10, static_cast<char>('a' + (*records)[row] % 26)),
                  values.substr(offsets[row], 20 << 10)) << "row " << row;
      }
      most = std::max(most, c.bytes);
      EXPECT_LE(filler.read_capacity(), static_cast<size_t>(most) * 3 / 2);
    }
  }
}

}  // namespace
}  // namespace shardfeed
