// Helpers for the extent cache's tests: keys with known bytes, a cache on
// a folder, reserve-and-insert in one call, looks at the folder that do not
// touch entries (as Find would). Test-only; failures are gtest failures.
#ifndef SHARDFEED_RECORD_CACHE_CACHE_TEST_UTIL_H_
#define SHARDFEED_RECORD_CACHE_CACHE_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "record/cache/extent_cache.h"
#include "record/cache/local_extent_cache.h"

namespace shardfeed::testing {

// Extent i of a made-up object, `length` bytes.
ExtentKey Key(int i, uint64_t length, std::string etag = "\"e1\"");

// The bytes a key stands for (pseudo-random, fixed per key).
std::string BytesOf(const ExtentKey& key);

// ExtentCache::Open on `dir`; nullptr (and the error on stderr) on failure,
// so forked children can use it too.
std::shared_ptr<LocalExtentCache> OpenCache(const std::string& dir, uint64_t limit);

// Reserves and inserts key's bytes; the entry, pinned (nullptr on failure).
std::shared_ptr<const ExtentCache::Entry> Put(ExtentCache& cache, const ExtentKey& key);

// Whether the entry's file exists (without touching it, as Find would).
bool Stored(const ExtentCache& cache, const ExtentKey& key);

// used_bytes(), 0 on error.
uint64_t Used(const ExtentCache& cache);

void ExpectUsage(const LocalExtentCache& cache, uint64_t entry_bytes, uint64_t reserved_bytes);

}  // namespace shardfeed::testing

#endif  // SHARDFEED_RECORD_CACHE_CACHE_TEST_UTIL_H_
