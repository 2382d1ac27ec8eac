#include "record/cache/cache_test_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "record/cache/cache_files.h"
#include "record/test_util.h"

namespace shardfeed::testing {

ExtentKey Key(int i, uint64_t length, std::string etag) {
  return ExtentKey{absl::StrCat("s3://bucket/ds/train-", i, ".tfrecord"), std::move(etag),
                   uint64_t(i) * 1000, length};
}

std::string BytesOf(const ExtentKey& key) {
  return RandomBytes(key.length, key.offset + key.etag.size() * 7919);
}

std::shared_ptr<LocalExtentCache> OpenCache(const std::string& dir, uint64_t limit) {
  absl::StatusOr<std::shared_ptr<ExtentCache>> cache = ExtentCache::Open({dir, limit});
  if (!cache.ok()) {
    std::fprintf(stderr, "pid %d: %s\n", ::getpid(), cache.status().ToString().c_str());
    return nullptr;
  }
  return std::dynamic_pointer_cast<LocalExtentCache>(*cache);
}

std::shared_ptr<const ExtentCache::Entry> Put(ExtentCache& cache, const ExtentKey& key) {
  absl::StatusOr<ExtentCache::Reservation> room = cache.Reserve(key.length);
  EXPECT_TRUE(room.ok()) << room.status();
  if (!room.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> entry =
      cache.Insert(key, std::move(*room), BytesOf(key));
  EXPECT_TRUE(entry.ok()) << entry.status();
  return entry.ok() ? *entry : nullptr;
}

bool Stored(const ExtentCache& cache, const ExtentKey& key) {
  struct stat st;
  const std::string path =
      absl::StrCat(cache.dir(), "/", cache_internal::EntryFileName(key));
  return ::stat(path.c_str(), &st) == 0;
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

}  // namespace shardfeed::testing
