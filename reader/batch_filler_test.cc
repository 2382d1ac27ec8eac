// ShardFiles and BatchFiller: a dataset of more shards than the process may open files
// reads fine (descriptors opened on demand, at most kMaxOpen kept). Its own
// binary: the descriptor limit is process-wide.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "absl/strings/match.h"
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

// Fault injection for FailedReadNamesTheShardAndOffset: pread fails with EIO
// on the file with this inode (0: never).
std::atomic<ino_t> g_failing_inode{0};

extern "C" ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  if (g_failing_inode.load() != 0) {
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_ino == g_failing_inode.load()) {
      errno = EIO;
      return -1;
    }
  }
  return ::syscall(SYS_pread64, fd, buf, count, offset);
}

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
// One indexed shard of 64 records of 20 KB ("blob": 'a' + k % 26 repeated).
std::string WriteBlobShard(const std::string& dir) {
  const std::string path = dir + "/data-0.tfrecord";
  auto w = RecordWriter::Create(path, {});
  EXPECT_TRUE(w.ok());
  for (int k = 0; k < 64; ++k) {
    ExampleEncoder e;
    const std::string blob(20 << 10, static_cast<char>('a' + k % 26));  // outlives Finish()
    e.AddBytes("blob", blob);
    EXPECT_TRUE((*w)->WriteRecord(e.Finish()).ok());
  }
  EXPECT_TRUE(WriteIndexFile(IndexPathFor(path), (*w)->index()).ok());
  EXPECT_TRUE((*w)->Close().ok());
  return path;
}

// A batch filler over `dir`'s shards, batch 8 of "blob", reading with pread.
struct FillerFixture {
  absl::StatusOr<Dataset> ds;
  absl::StatusOr<ResolvedOptions> r;
  std::unique_ptr<ShardFiles> files;
  std::shared_ptr<SlotRing> ring;
  SlotRing::Slot* slot = nullptr;
  std::unique_ptr<BatchFiller> filler;

  explicit FillerFixture(const std::string& dir) : ds(Dataset::Open({dir})) {
    EXPECT_TRUE(ds.ok()) << ds.status();
    LoaderOptions o;
    o.features = *ParseSpec("blob:bytes");
    o.batch_size = 8;
    r = ResolveOptions(*ds, o);
    EXPECT_TRUE(r.ok()) << r.status();
    auto f = ShardFiles::Open(*ds);
    EXPECT_TRUE(f.ok()) << f.status();
    files = std::move(*f);
    SlotLayout layout;
    layout.features = r->o.features;
    layout.transform_of = r->transform_of;
    layout.present.assign(layout.features.size(), true);
    layout.batch_size = o.batch_size;
    auto g = SlotRing::Create(layout, 1, nullptr);
    EXPECT_TRUE(g.ok()) << g.status();
    ring = std::move(*g);
    {
      std::lock_guard<std::mutex> lock(ring->mu);
      slot = ring->slot_locked(0);
    }
    filler = std::make_unique<BatchFiller>(&*ds, files.get(), &*r);
  }
};

TEST(BatchFiller, ReadMemoryIsWhatOneBatchReads) {
  const std::string dir = testing::MakeTempDir();
  WriteBlobShard(dir);
  FillerFixture fx(dir);
  ASSERT_TRUE(fx.r.ok());
  BatchFiller& filler = *fx.filler;
  SlotRing::Slot* slot = fx.slot;
  const std::vector<int64_t> scattered = {0, 2, 4, 6, 8, 10, 12, 14};  // 8 reads
  const std::vector<int64_t> neighbours = {16, 17, 18, 19, 20, 21, 22, 23};  // 1 read
  int64_t most = 0;
  for (int round = 0; round < 3; ++round) {
    for (const auto* records : {&scattered, &neighbours}) {
      FillCounters c;
      auto kept = filler.Fill(*records, slot, 0, &c);
      ASSERT_TRUE(kept.ok()) << kept.status();
      EXPECT_EQ(8, *kept);
      const std::string values(slot->var_values[0].begin(), slot->var_values[0].end());
      const auto& offsets = slot->var_offsets[0];
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

// Review finding 11: an I/O error while reading records keeps its code and
// names the shard and the offset the read began at. The error is injected:
// this binary's pread (it overrides libc's for the code linked into it)
// fails with EIO on the one file whose inode the test names, as a failing
// disk would.
TEST(BatchFiller, FailedReadNamesTheShardAndOffset) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = WriteBlobShard(dir);
  FillerFixture fx(dir);
  ASSERT_TRUE(fx.r.ok());
  const uint64_t offset = fx.ds->shards[0].index[5].offset;  // the first record read
  struct stat st;
  ASSERT_EQ(0, ::stat(path.c_str(), &st));
  g_failing_inode = st.st_ino;
  FillCounters c;
  auto kept = fx.filler->Fill({9, 5, 30}, fx.slot, 0, &c);
  g_failing_inode = 0;
  ASSERT_FALSE(kept.ok());
  EXPECT_TRUE(absl::IsUnavailable(kept.status())) << kept.status();  // not DATA_LOSS
  EXPECT_TRUE(absl::StrContains(kept.status().message(), absl::StrCat(path, ":", offset, ": reading")))
      << kept.status();
  EXPECT_TRUE(absl::StrContains(kept.status().message(), std::strerror(EIO))) << kept.status();
  // The same filler reads the batch once the disk recovers.
  auto again = fx.filler->Fill({9, 5, 30}, fx.slot, 0, &c);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(3, *again);
}

}  // namespace
}  // namespace shardfeed
