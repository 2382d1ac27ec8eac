// ExtentCache's bound and eviction in one process: refusals that say what
// limit would work, pins, the order (farthest next use, then least recently
// used), hints, a smaller limit, the bound after every op of a random
// workload.
#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "record/cache/cache_test_util.h"
#include "record/cache/extent_cache.h"
#include "record/cache/local_extent_cache.h"
#include "record/test_util.h"

// In shardfeed::testing: the helpers of cache_test_util.h by their names.
namespace shardfeed::testing {
namespace {

using ::testing::HasSubstr;

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

}  // namespace
}  // namespace shardfeed::testing
