// ExtentCache in one process: hits and misses, keys, reservations, damaged
// entries, files that are not the cache's. (Eviction and the bound:
// extent_cache_eviction_test.cc; several processes and killed writers:
// extent_cache_process_test.cc.)
#include "record/cache/extent_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "record/cache/cache_files.h"
#include "record/cache/cache_test_util.h"
#include "record/cache/local_extent_cache.h"
#include "record/test_util.h"

// In shardfeed::testing: the helpers of cache_test_util.h by their names.
namespace shardfeed::testing {
namespace {

using cache_internal::EntryFileName;
using ::testing::HasSubstr;

TEST(ExtentCacheTest, MissThenHitServesTheInsertedBytes) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey key = Key(1, 5000);
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> miss = cache->Find(key);
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_EQ(*miss, nullptr);

  auto inserted = Put(*cache, key);
  ASSERT_NE(inserted, nullptr);
  EXPECT_EQ(inserted->bytes(), BytesOf(key));
  inserted.reset();

  auto hit = cache->Find(key);
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_NE(*hit, nullptr);
  EXPECT_EQ((*hit)->bytes(), BytesOf(key));
  EXPECT_EQ(Used(*cache), 5000u);
  // A second cache on the folder (another rank) finds it too.
  auto other = OpenCache(cache->dir(), 1 << 20);
  auto there = other->Find(key);
  ASSERT_TRUE(there.ok() && *there != nullptr);
  EXPECT_EQ((*there)->bytes(), BytesOf(key));
}

TEST(ExtentCacheTest, AnotherEtagOffsetOrLengthIsAMiss) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey key = Key(1, 4096);
  ASSERT_NE(Put(*cache, key), nullptr);
  ExtentKey replaced = key;
  replaced.etag = "\"e2\"";  // the object was replaced in the bucket
  ExtentKey shifted = key;
  shifted.offset += 1;
  ExtentKey longer = key;
  longer.length += 1;
  ExtentKey other_object = key;
  other_object.object += "x";
  for (const ExtentKey& k : {replaced, shifted, longer, other_object}) {
    auto found = cache->Find(k);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, nullptr) << k.object << " " << k.etag << " " << k.offset << " " << k.length;
  }
}

TEST(ExtentCacheTest, EntriesOutliveTheirCache) {
  std::shared_ptr<const ExtentCache::Entry> entry;
  const ExtentKey key = Key(3, 10000);
  {
    auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
    entry = Put(*cache, key);
  }
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->bytes(), BytesOf(key));
}

TEST(ExtentCacheTest, InsertChecksItsArguments) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  auto other = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey key = Key(1, 100);
  auto room = cache->Reserve(100);
  ASSERT_TRUE(room.ok());
  auto wrong_size = cache->Insert(key, std::move(*room), std::string(99, 'x'));
  EXPECT_EQ(wrong_size.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_size.status().message(), HasSubstr("got 99 bytes"));

  auto small = cache->Reserve(50);
  ASSERT_TRUE(small.ok());
  auto too_small = cache->Insert(key, std::move(*small), BytesOf(key));
  EXPECT_EQ(too_small.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_small.status().message(), HasSubstr("reservation holds only 50 bytes"));

  auto foreign = other->Reserve(100);
  ASSERT_TRUE(foreign.ok());
  auto wrong_cache = cache->Insert(key, std::move(*foreign), BytesOf(key));
  EXPECT_EQ(wrong_cache.status().code(), absl::StatusCode::kInvalidArgument);
  ExpectUsage(*cache, 0, 0);  // every failed Insert gave its room back
}

TEST(ExtentCacheTest, ReservationsHoldRoomUntilInsertedOrDestroyed) {
  auto cache = OpenCache(testing::MakeTempDir(), 1000);
  {
    auto all = cache->Reserve(1000);
    ASSERT_TRUE(all.ok()) << all.status();
    EXPECT_EQ(all->bytes(), 1000u);
    EXPECT_EQ(cache->Reserve(1).status().code(), absl::StatusCode::kResourceExhausted);
    ExtentCache::Reservation moved = std::move(*all);
    EXPECT_EQ(cache->Reserve(1).status().code(), absl::StatusCode::kResourceExhausted);
  }
  auto again = cache->Reserve(1000);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(ExtentCacheTest, SameKeyInsertedTwiceKeepsOneEntry) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey key = Key(7, 3000);
  auto first = Put(*cache, key);
  auto second = Put(*cache, key);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->bytes(), BytesOf(key));
  ExpectUsage(*cache, 3000, 0);
}

TEST(ExtentCacheTest, DamagedEntryIsDroppedAsAMiss) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey shorter = Key(1, 4000);
  const ExtentKey longer = Key(2, 4000);
  ASSERT_NE(Put(*cache, shorter), nullptr);
  ASSERT_NE(Put(*cache, longer), nullptr);
  const std::string short_path = absl::StrCat(cache->dir(), "/", EntryFileName(shorter));
  const std::string long_path = absl::StrCat(cache->dir(), "/", EntryFileName(longer));
  ASSERT_EQ(::truncate(short_path.c_str(), 3999), 0);
  testing::WriteBytes(long_path, BytesOf(longer) + "tail");
  for (const ExtentKey& key : {shorter, longer}) {
    auto found = cache->Find(key);
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(*found, nullptr);
    EXPECT_FALSE(Stored(*cache, key));
  }
  // And it can be stored again.
  auto again = Put(*cache, shorter);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->bytes(), BytesOf(shorter));
}

TEST(ExtentCacheTest, DropRemovesAnEntryButNotWhatAHandleHolds) {
  auto cache = OpenCache(testing::MakeTempDir(), 1 << 20);
  const ExtentKey key = Key(4, 2000);
  auto held = Put(*cache, key);
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(cache->Drop(key).ok());
  auto found = cache->Find(key);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, nullptr);
  EXPECT_EQ(held->bytes(), BytesOf(key));
  EXPECT_TRUE(cache->Drop(key).ok());  // absent: nothing to do
  EXPECT_EQ(Used(*cache), 0u);
}

TEST(ExtentCacheTest, FilesThatAreNotTheCachesAreLeftAlone) {
  const std::string dir = testing::MakeTempDir();
  const std::string hex(64, 'a');
  const std::vector<std::string> theirs = {
      "notes.txt", "abc.extent", hex + ".extentX", hex + ".extent.tmp-x", ".inflight-1",
      std::string(64, 'A') + ".extent", hex + ".extent.tmp-1-"};
  for (const std::string& name : theirs) testing::WriteBytes(dir + "/" + name, "user data " + name);
  ASSERT_EQ(::mkdir((dir + "/" + std::string(64, 'b') + ".extent").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("notes.txt", (dir + "/" + std::string(64, 'c') + ".extent").c_str()), 0);
  {
    auto cache = OpenCache(dir, 1000);
    EXPECT_EQ(Used(*cache), 0u);  // not counted either
    for (int i = 0; i < 30; ++i) ASSERT_NE(Put(*cache, Key(i, 400)), nullptr);
  }
  auto reopened = OpenCache(dir, 1);  // evicts every entry it may
  EXPECT_EQ(Used(*reopened), 0u);
  for (const std::string& name : theirs) {
    EXPECT_EQ(testing::ReadBytes(dir + "/" + name), "user data " + name) << name;
  }
  struct stat st;
  EXPECT_EQ(::lstat((dir + "/" + std::string(64, 'b') + ".extent").c_str(), &st), 0);
  EXPECT_EQ(::lstat((dir + "/" + std::string(64, 'c') + ".extent").c_str(), &st), 0);
}

TEST(ExtentCacheTest, OpenRemovesStaleTemporariesButNotLiveOnes) {
  const std::string dir = testing::MakeTempDir();
  const std::string entry = EntryFileName(Key(1, 10));
  const std::string stale = dir + "/" + cache_internal::TempFileName(entry, 999999, 1);
  const std::string live = dir + "/" + cache_internal::TempFileName(entry, ::getpid(), 77);
  testing::WriteBytes(stale, "half");
  testing::WriteBytes(live, "half");
  int live_fd = ::open(live.c_str(), O_RDONLY);
  ASSERT_GE(live_fd, 0);
  ASSERT_EQ(::flock(live_fd, LOCK_EX), 0);  // a writer at work
  auto cache = OpenCache(dir, 1000);
  struct stat st;
  EXPECT_NE(::stat(stale.c_str(), &st), 0);
  EXPECT_EQ(::stat(live.c_str(), &st), 0);
  ::close(live_fd);  // the writer died
  EXPECT_TRUE(cache->used_bytes().ok());  // any listing cleans up
  EXPECT_NE(::stat(live.c_str(), &st), 0);
}

// Two caches on one folder in one process (two loaders) storing the same key
// at once: each writes its own temporary (the numbers in the temporaries'
// names were per cache, so the second Insert failed with ALREADY_EXISTS).
TEST(ExtentCacheTest, TwoCachesOfOneProcessInsertTheSameKeyAtOnce) {
  const std::string dir = testing::MakeTempDir();
  auto first = OpenCache(dir, 1 << 20);
  auto second = OpenCache(dir, 1 << 20);
  const ExtentKey key = Key(6, 4000);
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> inner =
      absl::UnknownError("the mid-write hook never ran");
  bool hooked = false;
  LocalExtentCache::SetMidWriteHookForTesting([&] {
    if (hooked) return;  // the inner Insert's own call
    hooked = true;
    absl::StatusOr<ExtentCache::Reservation> room = second->Reserve(key.length);
    ASSERT_TRUE(room.ok()) << room.status();
    inner = second->Insert(key, std::move(*room), BytesOf(key));
  });
  auto outer = Put(*first, key);
  LocalExtentCache::SetMidWriteHookForTesting(nullptr);
  ASSERT_TRUE(inner.ok()) << inner.status();
  ASSERT_NE(*inner, nullptr);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ((*inner)->bytes(), BytesOf(key));
  EXPECT_EQ(outer->bytes(), BytesOf(key));
  ExpectUsage(*first, key.length, 0);
}

TEST(DefaultExtentCacheDirTest, FollowsTheEnvironment) {
  const char* keep_home = std::getenv("HOME");
  const std::string home = keep_home ? keep_home : "";
  ::setenv("SHARDFEED_CACHE_DIR", "/x/cache", 1);
  ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  ::setenv("HOME", "/x/home", 1);
  EXPECT_EQ(DefaultExtentCacheDir(), "/x/cache");
  ::unsetenv("SHARDFEED_CACHE_DIR");
  EXPECT_EQ(DefaultExtentCacheDir(), "/x/xdg/shardfeed/extents");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(DefaultExtentCacheDir(), "/x/home/.cache/shardfeed/extents");
  ::setenv("HOME", home.c_str(), 1);
}

TEST(ExtentCacheTest, AFileWhereTheFolderShouldBeIsAnErrorNamingIt) {
  const std::string file = testing::MakeTempDir() + "/plain";
  testing::WriteBytes(file, "x");
  auto cache = ExtentCache::Open({file, 1000});
  ASSERT_FALSE(cache.ok());
  EXPECT_THAT(cache.status().message(), HasSubstr(file));
}



}  // namespace
}  // namespace shardfeed::testing
