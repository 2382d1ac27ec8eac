#include "reader/extent_prefetcher.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "reader/loader_backend.h"
#include "record/remote/remote_files.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace {

// The walker stays at most this many batches ahead of the claims (bounds
// the memory of walked batches; the cache limit bounds the bytes).
constexpr uint64_t kMaxBatchesAhead = 4096;
constexpr int kMinRequests = 2;
constexpr int kFirstRequests = 8;
constexpr int kReserveWaits = 100;  // x 20 ms

}  // namespace

ExtentPrefetcher::ExtentPrefetcher(std::shared_ptr<ExtentPlan> plan,
                                   std::vector<std::shared_ptr<RandomAccessSource>> sources,
                                   std::shared_ptr<ExtentCache> cache, int max_requests)
    : plan_(std::move(plan)), sources_(std::move(sources)), cache_(std::move(cache)),
      max_requests_(std::max(kMinRequests, max_requests)) {
  const ExtentTable& t = plan_->table();
  lengths_.resize(t.size());
  for (size_t id = 0; id < t.size(); ++id) {
    const RandomAccessSource* s = sources_[t[id].shard].get();
    const uint64_t size = s != nullptr ? s->size() : 0;
    lengths_[id] = t[id].offset >= size ? 0 : std::min(t[id].length, size - t[id].offset);
  }
  from_cache_.assign(t.size(), 0);
  refetched_.assign(t.size(), 0);
  // Before any measurement: several parallel range requests (AWS's
  // guidance); the probe never goes below where it started.
  target_ = std::min(kFirstRequests, max_requests_);
  probe_ = target_;
  window_start_ = NowSeconds();
}

absl::StatusOr<std::shared_ptr<ExtentPrefetcher>> ExtentPrefetcher::Start(
    std::shared_ptr<ExtentPlan> plan, std::vector<std::shared_ptr<RandomAccessSource>> sources,
    std::shared_ptr<ExtentCache> cache, int max_requests) {
  std::shared_ptr<ExtentPrefetcher> p(
      new ExtentPrefetcher(std::move(plan), std::move(sources), std::move(cache), max_requests));
  try {
    for (int i = 0; i < p->max_requests_; ++i) p->fetchers_.emplace_back([q = p.get()] { q->FetchLoop(); });
    p->walker_ = std::thread([q = p.get()] { q->Walk(); });
  } catch (const std::system_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat("could not start the extent prefetcher's threads: ", e.what()));
  }
  return p;
}

ExtentPrefetcher::~ExtentPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  walk_cv_.notify_all();
  fetch_cv_.notify_all();
  ready_cv_.notify_all();
  if (walker_.joinable()) walker_.join();
  for (std::thread& t : fetchers_) t.join();
}

ExtentKey ExtentPrefetcher::KeyOf(size_t id) const {
  const Extent& e = plan_->table()[id];
  const RandomAccessSource& s = *sources_[e.shard];
  return ExtentKey{s.path(), s.version(), e.offset, lengths_[id]};
}

void ExtentPrefetcher::Claimed(uint64_t g) {
  std::lock_guard<std::mutex> lock(mu_);
  claimed_ = std::max(claimed_, g + 1);
  walk_cv_.notify_all();
}

void ExtentPrefetcher::Filled(uint64_t g, bool corrupt) {
  std::vector<size_t> released, dropped;
  int64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = batches_.find(g);
    if (it == batches_.end()) {
      if (g >= walked_) filled_early_.insert(g);  // the walker skips it
      return;
    }
    epoch = it->second.first;
    if (corrupt) dropped = std::vector<size_t>(it->second.second.begin(), it->second.second.end());
    for (uint32_t id : it->second.second) {
      auto l = live_.find(id);
      if (l == live_.end() || --l->second->uses > 0) continue;
      if (l->second->ready && l->second->error.ok()) released.push_back(id);
      pinned_ -= lengths_[id];
      live_.erase(l);
    }
    batches_.erase(it);
  }
  walk_cv_.notify_all();
  // Outside the lock: the next epoch's table is built once, O(N).
  for (size_t id : released) cache_->SetNextUse(KeyOf(id), plan_->NextEpochUse(id, epoch));
  for (size_t id : dropped) (void)cache_->Drop(KeyOf(id));  // the batch's error is reported
}

std::shared_ptr<ExtentPrefetcher::State> ExtentPrefetcher::StateOf(size_t id, bool front) {
  std::shared_ptr<State>& st = live_[id];
  if (st == nullptr) {
    st = std::make_shared<State>();
    pinned_ += lengths_[id];
    if (front) {
      queue_.push_front(id);
    } else {
      queue_.push_back(id);
    }
  }
  return st;
}

void ExtentPrefetcher::Walk() {
  std::vector<uint32_t> extents;
  int64_t epoch = 0;
  uint64_t position = 0;
  const uint64_t limit = cache_->limit_bytes();
  for (uint64_t g = 0;; ++g) {
    // Outside the lock: the first batch of an epoch builds its order.
    if (!plan_->BatchExtents(g, &extents, &epoch, &position)) return;
    std::unique_lock<std::mutex> lock(mu_);
    auto fits = [&] {
      uint64_t more = 0;
      for (uint32_t id : extents) {
        if (live_.count(id) == 0) more += lengths_[id];
      }
      return pinned_ + more <= limit && g < claimed_ + kMaxBatchesAhead;
    };
    walk_cv_.wait(lock, [&] { return stop_ || g < claimed_ || fits(); });
    if (stop_) return;
    walked_ = g + 1;
    if (filled_early_.erase(g) > 0) continue;  // read before the walker got here
    std::vector<uint32_t>& mine = batches_[g].second;
    batches_[g].first = epoch;
    for (uint32_t id : extents) {
      if (sources_[plan_->table()[id].shard] == nullptr) continue;  // a local shard
      ++StateOf(id, /*front=*/false)->uses;
      mine.push_back(id);
    }
    fetch_cv_.notify_all();
  }
}

void ExtentPrefetcher::FetchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    fetch_cv_.wait(lock, [&] {
      if (stop_) return true;
      if (queue_.empty()) window_starved_ = true;
      return !queue_.empty() && active_ < target_;
    });
    if (stop_) return;
    const size_t id = queue_.front();
    queue_.pop_front();
    auto live = live_.find(id);
    if (live == live_.end() || live->second->started) continue;  // dropped, or queued twice
    std::shared_ptr<State> st = live->second;
    st->started = true;
    ++active_;
    lock.unlock();
    bool hit = false;
    absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> got = FetchOne(id, &hit);
    const double first_byte = remote::LastFirstByteSeconds();
    lock.lock();
    --active_;
    if (got.ok()) {
      st->entry = *std::move(got);
      from_cache_[id] = hit ? 1 : 0;
      if (hit) {
        ++traffic_.hits;
      } else if (lengths_[id] > 0) {
        ++traffic_.requests;
        traffic_.bytes += static_cast<int64_t>(lengths_[id]);
        Measure(lengths_[id], first_byte);
      }
    } else {
      st->error = got.status();
    }
    st->ready = true;
    ready_cv_.notify_all();
    fetch_cv_.notify_all();  // the target may have grown
  }
}

absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> ExtentPrefetcher::FetchOne(size_t id,
                                                                                     bool* hit) {
  const ExtentKey key = KeyOf(id);
  if (key.length == 0) return std::shared_ptr<const ExtentCache::Entry>();
  ASSIGN_OR_RETURN(std::shared_ptr<const ExtentCache::Entry> found, cache_->Find(key));
  if (found != nullptr) {
    *hit = true;
    return found;
  }
  const RandomAccessSource& source = *sources_[plan_->table()[id].shard];
  auto context = [&](const absl::Status& st) {
    return absl::Status(st.code(), absl::StrCat(key.object, ": extent [", key.offset, ", ",
                                                key.offset + key.length, "): ", st.message()));
  };
  absl::StatusOr<ExtentCache::Reservation> room = cache_->Reserve(key.length);
  // Pins held for a moment (a worker copying an extent fetched on demand,
  // another rank's fetch) free up soon: a bounded wait before failing.
  for (int wait = 0; wait < kReserveWaits && absl::IsResourceExhausted(room.status()); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    room = cache_->Reserve(key.length);
  }
  if (!room.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    return context(absl::Status(
        room.status().code(),
        absl::StrCat(room.status().message(), " (this loader holds ", pinned_,
                     " bytes of extents for batches ", claimed_, " claimed, ", walked_,
                     " planned ahead)")));
  }
  std::unique_ptr<char[]> bytes(new char[key.length]);
  absl::StatusOr<size_t> read = source.ReadAt(key.offset, bytes.get(), key.length);
  if (!read.ok()) return context(read.status());
  if (*read != key.length) {
    return context(absl::DataLossError(absl::StrCat(
        "the object ended after ", *read, " bytes of the extent (replaced or truncated?)")));
  }
  return cache_->Insert(key, *std::move(room), absl::string_view(bytes.get(), key.length));
}

void ExtentPrefetcher::Measure(uint64_t bytes, double first_byte) {
  if (first_byte > 0) first_byte_ = first_byte_ == 0 ? first_byte : 0.8 * first_byte_ + 0.2 * first_byte;
  window_bytes_ += bytes;
  ++window_fetches_;
  const double now = NowSeconds();
  if (window_fetches_ < std::max(target_ / 2, 2) || now <= window_start_) return;
  const double rate = window_bytes_ / (now - window_start_);
  const double mean_bytes = static_cast<double>(window_bytes_) / window_fetches_;
  if (!window_starved_) {
    // Backlogged: the rate is what this many requests in flight achieve.
    // While one more raised it, try another.
    if (rate > probe_rate_ * 1.05) {
      probe_rate_ = rate;
      probe_ = std::min(probe_ + 1, max_requests_);
    }
    best_rate_ = std::max(best_rate_ * 0.9, rate);
  } else {
    best_rate_ = std::max(best_rate_, rate);
  }
  const int little = static_cast<int>(std::ceil(first_byte_ * best_rate_ / mean_bytes)) + 1;
  target_ = std::clamp(std::max(little, probe_), kMinRequests, max_requests_);
  traffic_.first_byte_seconds = first_byte_;
  traffic_.bytes_per_second = best_rate_;
  window_start_ = now;
  window_bytes_ = 0;
  window_fetches_ = 0;
  window_starved_ = false;
}

absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> ExtentPrefetcher::Acquire(size_t id) {
  std::unique_lock<std::mutex> lock(mu_);
  std::shared_ptr<State> st = StateOf(id, /*front=*/true);
  fetch_cv_.notify_all();
  ready_cv_.wait(lock, [&] { return stop_ || st->ready; });
  if (!st->ready) return absl::CancelledError("the loader is closing");
  if (!st->error.ok()) return st->error;
  std::shared_ptr<const ExtentCache::Entry> entry = st->entry;
  if (st->uses == 0) {  // fetched on demand only: the caller's handle pins it
    auto it = live_.find(id);
    if (it != live_.end() && it->second == st) {
      pinned_ -= lengths_[id];
      live_.erase(it);
      walk_cv_.notify_all();
    }
  }
  return entry;
}

absl::StatusOr<bool> ExtentPrefetcher::Refetch(size_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (refetched_[id]) return true;
    if (!from_cache_[id]) return false;
    refetched_[id] = 1;
  }
  // Dropped before a fetch thread can look: the fetch below misses.
  RETURN_IF_ERROR(cache_->Drop(KeyOf(id)));
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto live = live_.find(id);
    if (live != live_.end() && live->second->ready) {
      // Later readers wait for the fresh bytes; the walked batches' uses
      // carry over (pinned_ still counts the extent once).
      auto fresh = std::make_shared<State>();
      fresh->uses = live->second->uses;
      live->second = std::move(fresh);
      queue_.push_front(id);
    }
  }
  fetch_cv_.notify_all();
  return true;
}

ExtentTraffic ExtentPrefetcher::traffic() const {
  std::lock_guard<std::mutex> lock(mu_);
  ExtentTraffic t = traffic_;
  t.in_flight = target_;
  return t;
}

}  // namespace shardfeed
