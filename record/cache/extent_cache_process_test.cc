// ExtentCache shared by processes (forked ranks) and threads: a writer
// killed mid-write, concurrent inserts and finds under one limit.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "record/cache/cache_files.h"
#include "record/cache/cache_test_util.h"
#include "record/cache/extent_cache.h"
#include "record/cache/local_extent_cache.h"
#include "record/test_util.h"

namespace shardfeed {
namespace {

using Clock = std::chrono::steady_clock;
using cache_internal::CacheFileKind;

using testing::BytesOf;
using testing::OpenCache;

// 1 B .. 24 KiB, fixed per key.
ExtentKey Key(int i) { return testing::Key(i, 1 + (uint64_t(i) * 2654435761u) % (24 << 10)); }

int CountFiles(const std::string& dir, CacheFileKind kind) {
  absl::StatusOr<std::vector<cache_internal::CacheFile>> files =
      cache_internal::ListCacheFolder(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  int n = 0;
  for (const auto& f : files.value_or(std::vector<cache_internal::CacheFile>{})) {
    n += f.kind == kind;
  }
  return n;
}

// Waits (at most `timeout`) for one byte on `fd`.
bool ReadByteWithin(int fd, std::chrono::milliseconds timeout) {
  struct pollfd p = {fd, POLLIN, 0};
  if (::poll(&p, 1, int(timeout.count())) != 1) return false;
  char c;
  return ::read(fd, &c, 1) == 1;
}

// A failure in a forked child: say what, exit non-zero (gtest's asserts do
// not reach the parent).
#define CHILD_CHECK(cond, ...)                                     \
  do {                                                             \
    if (!(cond)) {                                                 \
      std::fprintf(stderr, "pid %d: %s: ", ::getpid(), #cond);      \
      std::fprintf(stderr, __VA_ARGS__);                           \
      std::fprintf(stderr, "\n");                                  \
      ::_exit(1);                                                  \
    }                                                              \
  } while (0)

TEST(ExtentCacheProcessTest, WriterKilledMidWriteLeavesNoEntryAndNoReservation) {
  const std::string dir = testing::MakeTempDir();
  const ExtentKey key{"s3://b/big", "e", 0, 1 << 20};
  int mid_write[2];
  ASSERT_EQ(::pipe(mid_write), 0);
  const pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    ::close(mid_write[0]);
    auto cache = OpenCache(dir, 4 << 20);
    CHILD_CHECK(cache != nullptr, "open");
    LocalExtentCache::SetMidWriteHookForTesting([&] {
      CHILD_CHECK(::write(mid_write[1], "h", 1) == 1, "pipe");
      ::sleep(30);  // killed here
    });
    auto room = cache->Reserve(key.length);
    CHILD_CHECK(room.ok(), "%s", room.status().ToString().c_str());
    (void)cache->Insert(key, std::move(*room), BytesOf(key));
    ::_exit(2);  // not reached
  }
  ::close(mid_write[1]);
  const bool halfway = ReadByteWithin(mid_write[0], std::chrono::seconds(30));
  ::close(mid_write[0]);
  if (!halfway) ::kill(writer, SIGKILL);
  ASSERT_TRUE(halfway) << "the writer never reached the middle of its Insert";

  // Half written: another rank sees no entry, the writer's temporary (kept:
  // its writer lives) and its reservation.
  auto cache = OpenCache(dir, 4 << 20);
  ASSERT_NE(cache, nullptr);
  auto found = cache->Find(key);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(*found, nullptr);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kTemp), 1);
  auto usage = cache->usage();
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_EQ(usage->entry_bytes, 0u);
  EXPECT_EQ(usage->reserved_bytes, key.length);

  ::kill(writer, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  ASSERT_TRUE(WIFSIGNALED(status));

  // Its reservation is still counted (a count is never below the truth)
  // until a listing recounts.
  auto counted = cache->counted_usage();
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->reserved_bytes, key.length);

  // Dead: its temporary and its reservation are gone at the next look.
  usage = cache->usage();
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_EQ(usage->entry_bytes, 0u);
  EXPECT_EQ(usage->reserved_bytes, 0u);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kTemp), 0);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kInflight), 1);  // this cache's own
  found = cache->Find(key);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, nullptr);
  auto room = cache->Reserve(4 << 20);  // the whole limit is free again
  EXPECT_TRUE(room.ok()) << room.status();
}

// One rank's random reads and fetches; exits non-zero on any wrong byte or
// broken bound. Writes its hit count to `report`.
[[noreturn]] void RunRank(const std::string& dir, uint64_t limit, int start, int report,
                          uint64_t seed) {
  auto cache = OpenCache(dir, limit);
  CHILD_CHECK(cache != nullptr, "open");
  CHILD_CHECK(ReadByteWithin(start, std::chrono::seconds(30)), "start signal");
  std::mt19937_64 rng(seed);
  std::vector<std::shared_ptr<const ExtentCache::Entry>> pins;
  int hits = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(25);
  for (int op = 0; op < 600 && Clock::now() < deadline; ++op) {
    const ExtentKey key = Key(int(rng() % 40));
    auto found = cache->Find(key);
    CHILD_CHECK(found.ok(), "%s", found.status().ToString().c_str());
    std::shared_ptr<const ExtentCache::Entry> entry = *found;
    if (entry != nullptr) {
      ++hits;
    } else {
      auto room = cache->Reserve(key.length);
      CHILD_CHECK(room.ok(), "%s", room.status().ToString().c_str());
      auto inserted = cache->Insert(key, std::move(*room), BytesOf(key));
      CHILD_CHECK(inserted.ok(), "%s", inserted.status().ToString().c_str());
      entry = *inserted;
    }
    CHILD_CHECK(entry->bytes() == BytesOf(key), "wrong bytes for key at %llu",
                (unsigned long long)key.offset);
    if (rng() % 3 == 0) pins.push_back(entry);
    if (pins.size() > 2) pins.erase(pins.begin());
    if (rng() % 4 == 0) cache->SetNextUse(key, rng() % 100);
    auto usage = cache->usage();
    CHILD_CHECK(usage.ok(), "%s", usage.status().ToString().c_str());
    CHILD_CHECK(usage->entry_bytes + usage->reserved_bytes <= limit, "%llu + %llu > %llu",
                (unsigned long long)usage->entry_bytes,
                (unsigned long long)usage->reserved_bytes, (unsigned long long)limit);
  }
  CHILD_CHECK(::write(report, &hits, sizeof(hits)) == sizeof(hits), "report");
  ::_exit(0);
}

TEST(ExtentCacheProcessTest, TwoRanksShareOneFolderUnderOneLimit) {
  // Room for both ranks' pins (2 each) and fetch (1 each), not for all keys.
  constexpr uint64_t kLimit = 256 << 10;
  const std::string dir = testing::MakeTempDir();
  int start[2], report[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(report), 0);
  std::vector<pid_t> ranks;
  for (uint64_t seed : {1, 2}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) RunRank(dir, kLimit, start[0], report[1], seed);
    ranks.push_back(pid);
  }
  ASSERT_EQ(::write(start[1], "gg", 2), 2);
  // A third process watches the bound while they run.
  auto watcher = OpenCache(dir, kLimit);
  ASSERT_NE(watcher, nullptr);
  const auto deadline = Clock::now() + std::chrono::seconds(40);
  std::vector<int> statuses;
  int looks = 0;
  while (statuses.size() < ranks.size() && Clock::now() < deadline) {
    auto usage = watcher->usage();
    ASSERT_TRUE(usage.ok()) << usage.status();
    EXPECT_LE(usage->entry_bytes + usage->reserved_bytes, kLimit);
    ++looks;
    for (pid_t& pid : ranks) {
      int status;
      if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        statuses.push_back(status);
        pid = 0;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (pid_t pid : ranks) {
    if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  }
  ASSERT_EQ(statuses.size(), 2u) << "ranks still running after 40 s";
  for (int status : statuses) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  int hits = 0;
  for (int i = 0; i < 2; ++i) {
    int h = 0;
    ASSERT_EQ(::read(report[0], &h, sizeof(h)), int(sizeof(h)));
    hits += h;
  }
  EXPECT_GT(hits, 100);
  EXPECT_GT(looks, 10);
  auto usage = watcher->usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_LE(usage->entry_bytes, kLimit);
  EXPECT_EQ(usage->reserved_bytes, 0u);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kTemp), 0);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kInflight), 1);  // the watcher's
}

// A cache used in a forked child (a data-loader worker forked after the
// cache was opened): the child's flocks are the parent's open descriptions,
// so they would not exclude the parent. The child is refused, and neither
// its Reservation's release nor its copy's destruction touches the parent's
// in-flight file (which they overwrote and unlinked: the parent's
// reservation vanished for every other process).
TEST(ExtentCacheProcessTest, AForkedChildIsRefusedAndLeavesTheParentsReservation) {
  const std::string dir = testing::MakeTempDir();
  auto cache = OpenCache(dir, 1 << 20);
  ASSERT_NE(cache, nullptr);
  absl::StatusOr<ExtentCache::Reservation> room = cache->Reserve(1000);
  ASSERT_TRUE(room.ok()) << room.status();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto more = cache->Reserve(10);
    CHILD_CHECK(absl::IsFailedPrecondition(more.status()), "Reserve in the child: %s",
                more.status().ToString().c_str());
    { ExtentCache::Reservation released = std::move(*room); }
    cache.reset();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed (stderr)";

  auto other = OpenCache(dir, 1 << 20);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(CountFiles(dir, CacheFileKind::kInflight), 2);
  auto usage = other->usage();
  ASSERT_TRUE(usage.ok()) << usage.status();
  EXPECT_EQ(usage->reserved_bytes, 1000u);
}

TEST(ExtentCacheProcessTest, ThreadsShareOneCache) {
  constexpr uint64_t kLimit = 256 << 10;
  auto cache = OpenCache(testing::MakeTempDir(), kLimit);
  ASSERT_NE(cache, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0), failed(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      const auto deadline = Clock::now() + std::chrono::seconds(20);
      std::shared_ptr<const ExtentCache::Entry> pin;
      for (int op = 0; op < 300 && Clock::now() < deadline; ++op) {
        const ExtentKey key = Key(int(rng() % 30));
        auto found = cache->Find(key);
        if (!found.ok()) ++failed[t];
        std::shared_ptr<const ExtentCache::Entry> entry = found.value_or(nullptr);
        if (entry == nullptr) {
          auto room = cache->Reserve(key.length);
          if (!room.ok()) {
            ++failed[t];
            continue;
          }
          auto inserted = cache->Insert(key, std::move(*room), BytesOf(key));
          if (!inserted.ok()) {
            ++failed[t];
            continue;
          }
          entry = *inserted;
        }
        wrong[t] += entry->bytes() != BytesOf(key);
        if (rng() % 2) pin = entry;
        cache->SetNextUse(key, rng() % 50);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    EXPECT_EQ(wrong[t], 0) << "thread " << t;
    EXPECT_EQ(failed[t], 0) << "thread " << t;
  }
  auto usage = cache->usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_LE(usage->entry_bytes, kLimit);
  EXPECT_EQ(usage->reserved_bytes, 0u);
}

}  // namespace
}  // namespace shardfeed
