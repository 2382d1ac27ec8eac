// ExtentCache in one process: hits and misses, keys, the bound, eviction
// order, pins, damaged entries, files that are not the cache's. (Several
// processes and killed writers: extent_cache_process_test.cc.)
#include "record/cache/extent_cache.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "record/cache/cache_files.h"
#include "record/cache/local_extent_cache.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using cache_internal::CacheFileKind;
using cache_internal::EntryFileName;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ExtentKey Key(int i, uint64_t length, std::string etag = "\"e1\"") {
  return ExtentKey{absl::StrCat("s3://bucket/ds/train-", i, ".tfrecord"), std::move(etag),
                   uint64_t(i) * 1000, length};
}

std::string BytesOf(const ExtentKey& key) {
  return testing::RandomBytes(key.length, key.offset + key.etag.size() * 7919);
}

std::shared_ptr<LocalExtentCache> OpenCache(const std::string& dir, uint64_t limit) {
  absl::StatusOr<std::shared_ptr<ExtentCache>> cache = ExtentCache::Open({dir, limit});
  EXPECT_TRUE(cache.ok()) << cache.status();
  return std::dynamic_pointer_cast<LocalExtentCache>(*cache);
}

// Reserves and inserts key's bytes; the entry, pinned.
std::shared_ptr<const ExtentCache::Entry> Put(ExtentCache& cache, const ExtentKey& key) {
  absl::StatusOr<ExtentCache::Reservation> room = cache.Reserve(key.length);
  EXPECT_TRUE(room.ok()) << room.status();
  if (!room.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> entry =
      cache.Insert(key, std::move(*room), BytesOf(key));
  EXPECT_TRUE(entry.ok()) << entry.status();
  return entry.ok() ? *entry : nullptr;
}

// Whether the entry's file exists (without touching it, as Find would).
bool Stored(const ExtentCache& cache, const ExtentKey& key) {
  struct stat st;
  return ::stat(absl::StrCat(cache.dir(), "/", EntryFileName(key)).c_str(), &st) == 0;
}

uint64_t Used(const ExtentCache& cache) {
  absl::StatusOr<uint64_t> used = cache.used_bytes();
  EXPECT_TRUE(used.ok()) << used.status();
  return used.value_or(0);
}

void ExpectUsage(const LocalExtentCache& cache, uint64_t entry_bytes, uint64_t reserved_bytes) {
  absl::StatusOr<LocalExtentCache::Usage> usage = cache.usage();
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_EQ(usage->entry_bytes, entry_bytes);
  EXPECT_EQ(usage->reserved_bytes, reserved_bytes);
}

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

TEST(ExtentCacheTest, TooSmallALimitSaysWhatWouldWorkAndEvictsNothing) {
  auto cache = OpenCache(testing::MakeTempDir(), 1000);
  auto pinned = Put(*cache, Key(1, 600));
  ASSERT_NE(Put(*cache, Key(2, 300)), nullptr);  // unpinned once returned
  auto room = cache->Reserve(500);
  ASSERT_EQ(room.status().code(), absl::StatusCode::kResourceExhausted) << room.status();
  EXPECT_THAT(room.status().message(), HasSubstr("cache_limit 1000 bytes"));
  EXPECT_THAT(room.status().message(), HasSubstr("600 bytes pinned"));
  EXPECT_THAT(room.status().message(), HasSubstr("needs at least 1100 bytes"));
  EXPECT_THAT(room.status().message(), HasSubstr(cache->dir()));
  EXPECT_TRUE(Stored(*cache, Key(2, 300)));  // a refused Reserve evicts nothing

  pinned.reset();
  room = cache->Reserve(500);
  ASSERT_TRUE(room.ok()) << room.status();
  // The least recently used (key 1) made the room; key 2 stays.
  EXPECT_FALSE(Stored(*cache, Key(1, 600)));
  EXPECT_TRUE(Stored(*cache, Key(2, 300)));
}

TEST(ExtentCacheTest, PinnedEntriesAreNeverEvicted) {
  auto cache = OpenCache(testing::MakeTempDir(), 300);
  auto a = Put(*cache, Key(1, 100));
  auto b = Put(*cache, Key(2, 100));
  auto c = Put(*cache, Key(3, 100));
  cache->SetNextUse(Key(2, 100), kNoNextUse);  // first to go, but pinned
  EXPECT_EQ(cache->Reserve(100).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Stored(*cache, Key(1, 100)) && Stored(*cache, Key(2, 100)) &&
              Stored(*cache, Key(3, 100)));
  c.reset();
  auto room = cache->Reserve(100);
  ASSERT_TRUE(room.ok()) << room.status();
  EXPECT_TRUE(Stored(*cache, Key(1, 100)));
  EXPECT_TRUE(Stored(*cache, Key(2, 100)));
  EXPECT_FALSE(Stored(*cache, Key(3, 100)));
  EXPECT_EQ(a->bytes(), BytesOf(Key(1, 100)));
  EXPECT_EQ(b->bytes(), BytesOf(Key(2, 100)));
}

TEST(ExtentCacheTest, EvictsFarthestNextUseFirstThenLeastRecentlyUsed) {
  auto cache = OpenCache(testing::MakeTempDir(), 500);
  for (int i = 1; i <= 5; ++i) ASSERT_NE(Put(*cache, Key(i, 100)), nullptr);
  cache->SetNextUse(Key(1, 100), 10);
  cache->SetNextUse(Key(3, 100), 50);
  cache->SetNextUse(Key(4, 100), kNoNextUse);
  // Unhinted: 2 and 5; 5 read last, then 2 read after it.
  ASSERT_TRUE(cache->Find(Key(5, 100)).ok());
  ASSERT_TRUE(cache->Find(Key(2, 100)).ok());
  const std::vector<int> expected_order = {4, 3, 1, 5, 2};
  std::vector<int> evicted;
  std::vector<ExtentCache::Reservation> held;  // so that each Reserve evicts again
  for (size_t step = 0; step < expected_order.size(); ++step) {
    auto room = cache->Reserve(100);
    ASSERT_TRUE(room.ok()) << room.status();
    held.push_back(std::move(*room));
    for (int i = 1; i <= 5; ++i) {
      if (!Stored(*cache, Key(i, 100)) &&
          std::find(evicted.begin(), evicted.end(), i) == evicted.end()) {
        evicted.push_back(i);
      }
    }
    ASSERT_EQ(evicted.size(), step + 1);
    ASSERT_LE(Used(*cache) + 100 * held.size(), 500u);
  }
  EXPECT_EQ(evicted, expected_order);
}

// A hint belongs to the entry it was given for: once that is evicted, a new
// copy of the same extent starts unhinted (the plan hints it again when it
// is released), so a spent "not again" does not make it the next victim.
TEST(ExtentCacheTest, AnEvictedEntrysHintIsForgotten) {
  auto cache = OpenCache(testing::MakeTempDir(), 300);
  for (int i = 1; i <= 3; ++i) ASSERT_NE(Put(*cache, Key(i, 100)), nullptr);
  cache->SetNextUse(Key(1, 100), kNoNextUse);
  {
    auto room = cache->Reserve(100);
    ASSERT_TRUE(room.ok()) << room.status();
    EXPECT_FALSE(Stored(*cache, Key(1, 100)));
  }
  ASSERT_NE(Put(*cache, Key(1, 100)), nullptr);  // fetched again: the newest
  auto room = cache->Reserve(100);
  ASSERT_TRUE(room.ok()) << room.status();
  EXPECT_TRUE(Stored(*cache, Key(1, 100)));
  EXPECT_FALSE(Stored(*cache, Key(2, 100)));  // the least recently used
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

TEST(ExtentCacheTest, OpenWithASmallerLimitShrinksTheFolder) {
  const std::string dir = testing::MakeTempDir();
  auto big = OpenCache(dir, 1000);
  for (int i = 0; i < 8; ++i) ASSERT_NE(Put(*big, Key(i, 100)), nullptr);
  EXPECT_EQ(Used(*big), 800u);
  auto small = OpenCache(dir, 350);
  EXPECT_EQ(Used(*small), 300u);
}

TEST(ExtentCacheTest, LimitHoldsAfterEveryOperationOfARandomWorkload) {
  constexpr uint64_t kLimit = 64 << 10;
  auto cache = OpenCache(testing::MakeTempDir(), kLimit);
  std::mt19937_64 rng(23);
  std::vector<std::shared_ptr<const ExtentCache::Entry>> pins;
  std::vector<ExtentCache::Reservation> held;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int hits = 0, inserts = 0, refused = 0;
  for (int op = 0; op < 3000 && std::chrono::steady_clock::now() < deadline; ++op) {
    const int id = int(rng() % 60);
    const ExtentKey key = Key(id, 1 + (uint64_t(id) * 2654435761u) % (12 << 10));
    switch (rng() % 6) {
      case 0:
      case 1: {
        auto found = cache->Find(key);
        ASSERT_TRUE(found.ok()) << found.status();
        if (*found != nullptr) {
          ++hits;
          ASSERT_EQ((*found)->bytes(), BytesOf(key));
          if (pins.size() < 3) pins.push_back(*found);
        }
        break;
      }
      case 2:
      case 3: {
        auto room = cache->Reserve(key.length);
        if (!room.ok()) {
          ASSERT_EQ(room.status().code(), absl::StatusCode::kResourceExhausted) << room.status();
          ++refused;
          break;
        }
        auto entry = cache->Insert(key, std::move(*room), BytesOf(key));
        ASSERT_TRUE(entry.ok()) << entry.status();
        ASSERT_EQ((*entry)->bytes(), BytesOf(key));
        ++inserts;
        break;
      }
      case 4:
        cache->SetNextUse(key, rng() % 4 == 0 ? kNoNextUse : rng() % 1000);
        break;
      case 5:
        if (!pins.empty()) pins.erase(pins.begin() + rng() % pins.size());
        if (held.size() < 2) {
          auto room = cache->Reserve(rng() % (8 << 10));
          if (room.ok()) held.push_back(std::move(*room));
        } else {
          held.clear();
        }
        break;
    }
    auto usage = cache->usage();
    ASSERT_TRUE(usage.ok()) << usage.status();
    ASSERT_LE(usage->entry_bytes + usage->reserved_bytes, kLimit) << "after op " << op;
    // What Reserve trusts between listings is exact in one process.
    auto counted = cache->counted_usage();
    ASSERT_TRUE(counted.ok()) << counted.status();
    ASSERT_EQ(counted->entry_bytes, usage->entry_bytes) << "after op " << op;
    ASSERT_EQ(counted->reserved_bytes, usage->reserved_bytes) << "after op " << op;
  }
  EXPECT_GT(hits, 100);
  EXPECT_GT(inserts, 100);
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
}  // namespace shardfeed
