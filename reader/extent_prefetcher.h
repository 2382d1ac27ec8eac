// ExtentPrefetcher: fetches the extents of a planned loader's remote shards
// ahead of the workers, in order of first use in the plan, into the bounded
// extent cache (record/cache/extent_cache.h), never one request per record.
//
// A walker thread goes through the plan (reader/extent_plan.h) batch by
// batch, at least as far as the workers have claimed and further while the
// extents it holds fit the cache limit; each extent seen for the first time
// is queued (and pinned: the prefetcher holds its cache entry until every
// walked batch that reads it is filled). Fetch threads take the queue in
// order: a cache hit costs nothing, a miss is one range request (If-Match
// the ETag taken at open; resumed and retried by the HTTP client) stored
// through Reserve/Insert. The number of requests in flight follows Little's
// law from measured values: ceil(time to first byte x throughput / extent
// size) + 1, within [2, max_requests], starting at 8; while more requests
// in flight still raised the throughput, one more is tried (additive
// increase), and the count never falls below the best probed.
// Released extents get their next use in the plan (the next epoch's first
// read) as the cache's eviction hint.
//
// Workers read through ExtentSource (reader/extent_source.h), which calls
// Acquire; they report Claimed(g) before and Filled(g) after each batch.
//
// Threading: thread-safe. Errors: a failed fetch (UNAVAILABLE after the
// client's retries, FAILED_PRECONDITION when the object was replaced,
// RESOURCE_EXHAUSTED from the cache) is returned by Acquire for that extent,
// naming the object.
#ifndef SHARDFEED_READER_EXTENT_PREFETCHER_H_
#define SHARDFEED_READER_EXTENT_PREFETCHER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "reader/extent_plan.h"
#include "record/cache/extent_cache.h"
#include "record/source.h"

namespace shardfeed {

struct ExtentTraffic {
  int64_t requests = 0;  // range requests sent for extents
  int64_t bytes = 0;     // bytes they brought
  int64_t hits = 0;      // extents found in the cache instead
  int in_flight = 0;     // the tuner's target now
  double first_byte_seconds = 0;  // measured (moving average)
  double bytes_per_second = 0;    // measured, the best recent window
};

class ExtentPrefetcher {
 public:
  // `sources`: per shard, its source (every shard's extents are fetched
  // through it; a null source is a shard read directly, never fetched).
  // Starts the walker and fetch threads.
  static absl::StatusOr<std::shared_ptr<ExtentPrefetcher>> Start(
      std::shared_ptr<ExtentPlan> plan, std::vector<std::shared_ptr<RandomAccessSource>> sources,
      std::shared_ptr<ExtentCache> cache, int max_requests);
  ~ExtentPrefetcher();  // stops and joins the threads
  ExtentPrefetcher(const ExtentPrefetcher&) = delete;
  ExtentPrefetcher& operator=(const ExtentPrefetcher&) = delete;

  // A worker took batch g: the walker goes at least this far.
  void Claimed(uint64_t g);
  // Batch g is filled (or failed): its extents' uses end. `corrupt`: a
  // record of it failed its CRCs: its extents are dropped from the cache
  // (a damaged entry is fetched again next time, never served again).
  void Filled(uint64_t g, bool corrupt = false);
  // The bytes of extent `id`, pinned while the handle lives; waits for its
  // fetch, fetching it first in line if nobody asked yet.
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> Acquire(size_t id);

  // Records of extent `id` failed their CRCs (or format). When the bytes
  // served were a cache hit, drops the cached entry and has the extent
  // fetched again from the object (If-Match, as any fetch): true, read it
  // again. True also once it was refetched (another reader's bytes may be
  // the damaged ones); false when the bytes came from the object itself.
  absl::StatusOr<bool> Refetch(size_t id);

  const ExtentPlan& plan() const { return *plan_; }
  ExtentTraffic traffic() const;

 private:
  struct State {
    int uses = 0;     // walked batches, not yet filled, that read it
    bool started = false;  // a fetch thread took it
    bool ready = false;
    absl::Status error;
    std::shared_ptr<const ExtentCache::Entry> entry;
  };
  ExtentPrefetcher(std::shared_ptr<ExtentPlan> plan,
                   std::vector<std::shared_ptr<RandomAccessSource>> sources,
                   std::shared_ptr<ExtentCache> cache, int max_requests);
  ExtentKey KeyOf(size_t id) const;
  void Walk();
  void FetchLoop();
  // Cache hit, or one range request stored in the cache.
  absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> FetchOne(size_t id, bool* hit);
  // Registers extent `id` (mu_ held); new: queued and counted as pinned.
  std::shared_ptr<State> StateOf(size_t id, bool front);
  // Drops the prefetcher's hold on `id` (mu_ held).
  void ReleaseLocked(size_t id, int64_t epoch_hint);
  // One network fetch done: the tuner's measurements (mu_ held).
  void Measure(uint64_t bytes, double first_byte);

  const std::shared_ptr<ExtentPlan> plan_;
  const std::vector<std::shared_ptr<RandomAccessSource>> sources_;
  const std::shared_ptr<ExtentCache> cache_;
  const int max_requests_;
  std::vector<uint64_t> lengths_;  // per extent, clamped to the object's size
  // Per extent (mu_): its last fetch was a cache hit; it was refetched
  // after its cached bytes failed (ExtentPrefetcher::Refetch).
  std::vector<uint8_t> from_cache_, refetched_;

  mutable std::mutex mu_;
  std::condition_variable walk_cv_, fetch_cv_, ready_cv_;
  bool stop_ = false;
  uint64_t claimed_ = 0;  // batches [0, claimed_) were claimed
  uint64_t walked_ = 0;   // batches [0, walked_) were walked
  uint64_t pinned_ = 0;   // bytes of extents held (fetched or in flight)
  std::unordered_map<size_t, std::shared_ptr<State>> live_;
  std::map<uint64_t, std::pair<int64_t, std::vector<uint32_t>>> batches_;  // g -> epoch, extents
  std::set<uint64_t> filled_early_;  // filled before the walker got there
  std::deque<size_t> queue_;
  int active_ = 0;
  // Tuner (mu_).
  int target_ = 8, probe_ = 8;
  double window_start_ = 0, best_rate_ = 0, probe_rate_ = 0, first_byte_ = 0;
  uint64_t window_bytes_ = 0;
  int window_fetches_ = 0;
  bool window_starved_ = false;  // a fetcher found nothing queued
  ExtentTraffic traffic_;

  std::thread walker_;
  std::vector<std::thread> fetchers_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_READER_EXTENT_PREFETCHER_H_
