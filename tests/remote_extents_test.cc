// Remote shards read by extents, driven by the plan (reader/
// extent_prefetcher.h), against SeaweedFS on loopback: batches equal the
// local ones (planned global shuffle with a cache holding the dataset,
// quasi, in order) with far fewer requests than records; the cache folder
// never exceeds its limit; a limit too small is refused up front with the
// number that works; a shard replaced mid-epoch is an error naming it; a
// resumed run with the warm cache fetches only what is not cached.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "reader/extent_table.h"
#include "reader/loader.h"
#include "record/file.h"
#include "record/remote/remote_files.h"
#include "record/test_util.h"
#include "tests/remote_test_util.h"

namespace shardfeed {
namespace {

constexpr uint64_t kExtentBytes = 4096;  // the test dataset is ~65 KB

struct Run {
  std::vector<std::string> batches;  // every tensor's bytes, per batch
  LoaderStats stats;
  LoaderState state;
  int64_t requests = 0;  // remote requests of the whole process meanwhile
};

// Bytes of the files under `dir` (recursively).
uint64_t FolderBytes(const std::string& dir) {
  uint64_t total = 0;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    const std::string path = dir + "/" + name;
    if (lstat(path.c_str(), &st) != 0) continue;
    total += S_ISDIR(st.st_mode) ? FolderBytes(path) : static_cast<uint64_t>(st.st_size);
  }
  closedir(d);
  return total;
}

// Reads at most `max_batches` batches (all when < 0); after every batch
// the cache folder is checked against `check_limit` (when > 0).
absl::StatusOr<Run> ReadRun(const std::vector<std::string>& paths, LoaderOptions o,
                            int max_batches = -1, uint64_t check_limit = 0) {
  const int64_t before = remote::RemoteTrafficSoFar().requests;
  auto loader = testing::OpenTestLoader(paths, o);
  if (!loader.ok()) return loader.status();
  Run run;
  for (int k = 0; max_batches < 0 || k < max_batches; ++k) {
    auto batch = (*loader)->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    if (!batch.ok()) return batch.status();
    std::string bytes = testing::BatchBytes(*batch);
    run.batches.push_back(std::move(bytes));
    if (check_limit > 0) {
      const uint64_t used = FolderBytes(o.remote.cache_dir);
      if (used > check_limit) {
        return absl::InternalError(absl::StrCat("after batch ", k, " the cache folder holds ",
                                                used, " bytes, over its limit ", check_limit));
      }
    }
  }
  run.stats = (*loader)->stats();
  run.state = (*loader)->state();
  loader->reset();
  run.requests = remote::RemoteTrafficSoFar().requests - before;
  return run;
}

LoaderOptions Options(ShuffleMode mode, bool shuffle) {
  LoaderOptions o;
  o.batch_size = 32;
  o.epochs = 2;
  o.seed = 11;
  o.shuffle = shuffle;
  o.shuffle_mode = mode;
  o.shuffle_buffer = 64;
  o.remote.extent_bytes = kExtentBytes;
  o.remote.cache_dir = testing::MakeTempDir();
  return o;
}

size_t ExtentCount(const std::string& dir) {
  auto ds = Dataset::Open({dir});
  EXPECT_TRUE(ds.ok()) << ds.status();
  return ds.ok() ? ExtentTable::Build(*ds, kExtentBytes).size() : 0;
}

// The number in "cache_limit >= N" of a refusal.
uint64_t SuggestedLimit(const absl::Status& st) {
  const std::string msg(st.message());
  const size_t at = msg.find("cache_limit >= ");
  if (at == std::string::npos) return 0;
  size_t end = at + 15;
  while (end < msg.size() && isdigit(static_cast<unsigned char>(msg[end]))) ++end;
  uint64_t n = 0;
  return absl::SimpleAtoi(msg.substr(at + 15, end - at - 15), &n) ? n : 0;
}

class RemoteExtentsTest : public testing::SeaweedSuite {};

TEST_F(RemoteExtentsTest, BatchesEqualLocalWithFewRequests) {
  const size_t extents = ExtentCount(local_dir());
  ASSERT_GT(extents, 8u);  // several extents per shard
  for (auto [mode, shuffle] : {std::pair{ShuffleMode::kGlobal, true},
                               std::pair{ShuffleMode::kQuasi, true},
                               std::pair{ShuffleMode::kGlobal, false}}) {
    SCOPED_TRACE(absl::StrCat("mode ", static_cast<int>(mode), " shuffle ", shuffle));
    const LoaderOptions o = Options(mode, shuffle);
    auto local = ReadRun({local_dir()}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = ReadRun({"s3://data/ds/"}, o);
    ASSERT_TRUE(remote.ok()) << remote.status();
    ASSERT_EQ(local->batches.size(), remote->batches.size());
    EXPECT_TRUE(local->batches == remote->batches);
    // Two epochs of 500 records: each extent fetched once (the cache holds
    // the dataset); opening the dataset and its 4 shards costs a few
    // requests each (listing, HEADs, indexes, a header read).
    EXPECT_EQ(remote->stats.remote_requests, static_cast<int64_t>(extents));
    EXPECT_LE(remote->requests, static_cast<int64_t>(extents) + 4 * 10);
    EXPECT_LT(remote->requests * 10, remote->stats.records);
    EXPECT_EQ(remote->stats.records, 2 * testing::kTestRecords);
  }
}

TEST_F(RemoteExtentsTest, TooSmallLimitIsRefusedUpFrontWithTheNumber) {
  LoaderOptions o = Options(ShuffleMode::kQuasi, true);
  o.remote.cache_limit = 1000;
  auto refused = ReadRun({"s3://data/ds/"}, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << refused.status();
  const uint64_t works = SuggestedLimit(refused.status());
  ASSERT_GT(works, 1000u) << refused.status();
  o.remote.cache_limit = works;
  auto run = ReadRun({"s3://data/ds/"}, o, -1, works);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stats.records, 2 * testing::kTestRecords);

  // Global shuffle needs the dataset in the cache: the refusal says so and
  // points at quasi.
  LoaderOptions g = Options(ShuffleMode::kGlobal, true);
  g.remote.cache_limit = 20000;
  auto global = ReadRun({"s3://data/ds/"}, g);
  ASSERT_FALSE(global.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(global.status())) << global.status();
  EXPECT_NE(global.status().message().find("quasi"), std::string::npos) << global.status();
  EXPECT_GT(SuggestedLimit(global.status()), 20000u) << global.status();
}

TEST_F(RemoteExtentsTest, CacheFolderNeverAboveTheLimit) {
  for (auto [mode, shuffle] : {std::pair{ShuffleMode::kQuasi, true},
                               std::pair{ShuffleMode::kGlobal, false}}) {
    SCOPED_TRACE(absl::StrCat("mode ", static_cast<int>(mode), " shuffle ", shuffle));
    LoaderOptions o = Options(mode, shuffle);
    o.remote.cache_limit = 1;
    const uint64_t works = SuggestedLimit(ReadRun({"s3://data/ds/"}, o).status());
    ASSERT_GT(works, 0u);
    o.remote.cache_limit = works + kExtentBytes;  // well below the ~65 KB dataset
    auto local = ReadRun({local_dir()}, o);
    ASSERT_TRUE(local.ok()) << local.status();
    auto remote = ReadRun({"s3://data/ds/"}, o, -1, o.remote.cache_limit);
    ASSERT_TRUE(remote.ok()) << remote.status();
    EXPECT_TRUE(local->batches == remote->batches);
    EXPECT_LE(FolderBytes(o.remote.cache_dir), o.remote.cache_limit);
  }
}

TEST_F(RemoteExtentsTest, ShardReplacedMidEpochIsAnErrorNamingIt) {
  testing::UploadFolder(local_dir(), "s3://data/replaced/");
  LoaderOptions o = Options(ShuffleMode::kGlobal, /*shuffle=*/false);
  o.epochs = 1;
  o.remote.cache_limit = 1;
  o.remote.cache_limit = SuggestedLimit(ReadRun({"s3://data/replaced/"}, o).status());
  ASSERT_GT(o.remote.cache_limit, 0u);
  auto loader = testing::OpenTestLoader({"s3://data/replaced/"}, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_TRUE((*loader)->Next().ok());
  // The last shard, read last in order, changes in the bucket: same size,
  // other bytes.
  auto bytes = ReadFileToString(local_dir() + "/part-3.tfrecord");
  ASSERT_TRUE(bytes.ok());
  std::string changed = *bytes;
  changed[changed.size() / 2] ^= 1;
  ASSERT_TRUE(WriteFileAtomically("s3://data/replaced/part-3.tfrecord", changed).ok());
  absl::Status failed;
  for (int k = 0; k < 100 && failed.ok(); ++k) {
    auto b = (*loader)->Next();
    if (absl::IsOutOfRange(b.status())) break;
    failed = b.status();
  }
  ASSERT_FALSE(failed.ok()) << "read the replaced shard without an error";
  EXPECT_TRUE(absl::IsFailedPrecondition(failed)) << failed;
  EXPECT_NE(failed.message().find("s3://data/replaced/part-3.tfrecord"), std::string::npos)
      << failed;
}

TEST_F(RemoteExtentsTest, ResumeWithTheWarmCacheFetchesOnlyWhatIsMissing) {
  LoaderOptions o = Options(ShuffleMode::kQuasi, true);
  o.epochs = 1;
  const size_t extents = ExtentCount(local_dir());
  auto whole = ReadRun({"s3://data/ds/"}, o);  // one uninterrupted run, its own cache
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->stats.remote_requests, static_cast<int64_t>(extents));
  // Killed after 5 batches, in a fresh cache; resumed from state().
  o.remote.cache_dir = testing::MakeTempDir();
  auto first = ReadRun({"s3://data/ds/"}, o, 5);
  ASSERT_TRUE(first.ok()) << first.status();
  LoaderOptions resumed = o;
  resumed.resume = first->state;
  auto second = ReadRun({"s3://data/ds/"}, resumed);
  ASSERT_TRUE(second.ok()) << second.status();
  std::vector<std::string> joined = first->batches;
  joined.insert(joined.end(), second->batches.begin(), second->batches.end());
  EXPECT_TRUE(joined == whole->batches);
  // Nothing fetched twice: the second run found what the first fetched.
  EXPECT_GT(second->stats.extent_cache_hits, 0);
  EXPECT_LE(first->stats.remote_requests + second->stats.remote_requests,
            static_cast<int64_t>(extents));
  EXPECT_LT(second->stats.remote_requests, whole->stats.remote_requests);
}

// Cached extents damaged on disk fail their records' CRCs: each is dropped
// and fetched again from the object within the run.
TEST_F(RemoteExtentsTest, ADamagedCachedExtentIsDroppedAndFetchedAgain) {
  LoaderOptions o = Options(ShuffleMode::kGlobal, /*shuffle=*/false);
  o.epochs = 1;
  auto first = ReadRun({"s3://data/ds/"}, o);
  ASSERT_TRUE(first.ok()) << first.status();
  // Flip a byte in the middle of every entry of the folder.
  int damaged = 0;
  DIR* d = opendir(o.remote.cache_dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    const std::string path = o.remote.cache_dir + "/" + e->d_name;
    struct stat st;
    if (e->d_name[0] == '.' || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size < 1000) {
      continue;
    }
    auto bytes = ReadFileToString(path);
    ASSERT_TRUE(bytes.ok());
    std::string changed = *bytes;
    changed[changed.size() / 2] ^= 0x20;
    ASSERT_TRUE(WriteFileAtomically(path, changed).ok());
    ++damaged;
  }
  closedir(d);
  ASSERT_GT(damaged, 0);
  // Every damaged entry is dropped and fetched again once, in the run:
  // batches equal the first run's, one request per damaged entry.
  auto second = ReadRun({"s3://data/ds/"}, o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->batches == first->batches);
  EXPECT_EQ(second->stats.remote_requests, damaged);
}

// The cache keeps entries without fsync on the premise that the reader drops
// one whose records fail their CRCs: a damaged entry of the right size is
// fetched once more from the object, and only bytes from the object that
// fail are DATA_LOSS (naming the shard and the record's offset).
TEST_F(RemoteExtentsTest, DamagedCachedExtentIsFetchedAgainOnce) {
  LoaderOptions o = Options(ShuffleMode::kGlobal, /*shuffle=*/true);
  o.epochs = 1;
  const size_t extents = ExtentCount(local_dir());
  auto local = ReadRun({local_dir()}, o);
  ASSERT_TRUE(local.ok()) << local.status();
  auto cold = ReadRun({"s3://data/ds/"}, o);
  ASSERT_TRUE(cold.ok()) << cold.status();
  ASSERT_EQ(cold->stats.remote_requests, static_cast<int64_t>(extents));
  // One byte in the middle of one cached entry flipped, same size.
  std::string damaged;
  DIR* d = opendir(o.remote.cache_dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 7 && name.substr(name.size() - 7) == ".extent") {
      damaged = o.remote.cache_dir + "/" + name;
      break;
    }
  }
  closedir(d);
  ASSERT_FALSE(damaged.empty());
  auto bytes = ReadFileToString(damaged);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::string changed = *bytes;
  changed[changed.size() / 2] ^= 0x20;
  ASSERT_TRUE(WriteFileAtomically(damaged, changed).ok());
  auto warm = ReadRun({"s3://data/ds/"}, o);
  ASSERT_TRUE(warm.ok()) << warm.status();
  EXPECT_TRUE(warm->batches == local->batches);
  EXPECT_EQ(warm->stats.remote_requests, 1);  // the damaged extent, once
  EXPECT_EQ(warm->stats.extent_cache_hits, static_cast<int64_t>(extents));
  // The entry was replaced by the object's bytes: a third run fetches nothing.
  auto again = ReadRun({"s3://data/ds/"}, o);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->stats.remote_requests, 0);

  // A shard damaged in the bucket itself stays DATA_LOSS with file and
  // offset, cold cache or warm.
  testing::UploadFolder(local_dir(), "s3://data/corrupt/");
  auto shard = ReadFileToString(local_dir() + "/part-1.tfrecord");
  ASSERT_TRUE(shard.ok());
  std::string bad = *shard;
  bad[bad.size() / 2] ^= 0x20;
  ASSERT_TRUE(WriteFileAtomically("s3://data/corrupt/part-1.tfrecord", bad).ok());
  for (const char* cache : {"cold", "warm"}) {
    SCOPED_TRACE(cache);
    auto failed = ReadRun({"s3://data/corrupt/"}, o);
    ASSERT_FALSE(failed.ok());
    EXPECT_TRUE(absl::IsDataLoss(failed.status())) << failed.status();
    EXPECT_NE(failed.status().message().find("s3://data/corrupt/part-1.tfrecord:"),
              std::string::npos)
        << failed.status();
  }
}

}  // namespace
}  // namespace shardfeed
