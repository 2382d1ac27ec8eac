// LocalExtentCache: ExtentCache over a local folder (the implementation
// behind ExtentCache::Open; see extent_cache.h for the contract and
// cache_files.h for the files and locks).
//
// How the bound holds across processes: every change to what the folder
// holds or to what a cache has reserved happens under the folder lock, and
// each open cache publishes its reserved bytes in its in-flight file. Under
// that lock, entries + every live cache's reservations <= limit (once an
// Open has evicted down to its limit); a temporary being written is covered
// by its writer's reservation, so the folder's bytes never exceed the limit
// plus the bytes in flight. A crashed process's reservation dies with its
// in-flight file's lock; its temporary is removed by the next listing.
//
// Recency for LRU is the entry file's mtime, set on every Find and Insert
// (strictly increasing within a process), so it is shared by all processes.
// Next-use hints are this process's own.
//
// Threading: thread-safe. The folder lock is a mutex plus an flock on a
// descriptor opened for each hold (flock does not exclude threads sharing a
// descriptor).
//
// fork(): a child shares the parent's descriptors, so its flocks would not
// exclude the parent and it would write the parent's in-flight file. In a
// child, everything that needs the folder lock (Reserve, Insert, usage)
// fails with FAILED_PRECONDITION (open the cache again there), and
// destroying the child's copy leaves the parent's files alone; Find works.
#ifndef SHARDFEED_RECORD_CACHE_LOCAL_EXTENT_CACHE_H_
#define SHARDFEED_RECORD_CACHE_LOCAL_EXTENT_CACHE_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "record/cache/cache_files.h"
#include "record/cache/extent_cache.h"

namespace shardfeed {

class LocalExtentCache : public ExtentCache {
 public:
  // `dir` must exist.
  static absl::StatusOr<std::shared_ptr<LocalExtentCache>> Create(std::string dir,
                                                                  uint64_t limit_bytes);
  ~LocalExtentCache() override;

  absl::StatusOr<std::shared_ptr<const Entry>> Find(const ExtentKey& key) override;
  absl::StatusOr<Reservation> Reserve(uint64_t n) override;
  absl::StatusOr<std::shared_ptr<const Entry>> Insert(const ExtentKey& key,
                                                      Reservation reservation,
                                                      absl::string_view bytes) override;
  absl::Status Drop(const ExtentKey& key) override;
  void SetNextUse(const ExtentKey& key, uint64_t position) override;
  uint64_t limit_bytes() const override { return limit_; }
  absl::StatusOr<uint64_t> used_bytes() const override;
  const std::string& dir() const override { return dir_; }

  // The folder as listed now, under the folder lock: bytes of entries and
  // bytes reserved by every live cache on it.
  struct Usage {
    uint64_t entry_bytes = 0;
    uint64_t reserved_bytes = 0;
  };
  absl::StatusOr<Usage> usage() const;
  // The same as the caches on the folder count it (what Reserve trusts
  // between listings): never below usage(). NOT_FOUND before any count.
  absl::StatusOr<Usage> counted_usage() const;

  // For tests: called by Insert after half of the bytes are written to the
  // temporary (e.g. to kill the process there). Process-wide.
  static void SetMidWriteHookForTesting(std::function<void()> hook);

 protected:
  void Unreserve(uint64_t bytes) override;

 private:
  // What a listing of the folder found, stale files removed.
  struct FolderState {
    std::vector<cache_internal::CacheFile> entries;
    uint64_t entry_bytes = 0;
    uint64_t others_reserved = 0;  // by other live caches on the folder
  };
  // What the folder holds as every cache on it counts it, kept under the
  // folder lock in the lock file: never below the truth (each change is
  // made first and counted second, and a crash leaves the count high),
  // recounted by each listing.
  struct Totals {
    uint64_t entry_bytes = 0;
    uint64_t reserved_bytes = 0;  // by every live cache
  };
  static constexpr char kTotalsMagic[] = "sfxc0001";
  static constexpr size_t kTotalsSize = 24;
  // Listing the folder costs about 2.7 us of system time per entry here;
  // between listings at most this old, Reserve works from the totals and
  // evicts from the last listing (other processes' reads since then are
  // not in its LRU order).
  static constexpr std::chrono::seconds kListingMaxAge{2};

  // The folder lock: this process's mutex, then LOCK_EX on .lock. Check
  // status() before relying on it.
  class FolderLock {
   public:
    explicit FolderLock(const LocalExtentCache* cache);
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;
    const absl::Status& status() const { return status_; }
    // nullopt when the lock file holds no totals (new, or damaged).
    absl::StatusOr<std::optional<Totals>> ReadTotals() const;
    absl::Status WriteTotals(const Totals& totals);

   private:
    std::lock_guard<std::mutex> lock_;
    std::string path_;
    cache_internal::UniqueFd fd_;  // closing it releases the flock
    absl::Status status_;
  };

  LocalExtentCache(std::string dir, uint64_t limit);

  std::string PathOf(absl::string_view name) const;
  // From here to DropDamaged: with the folder lock held.
  absl::Status CreateInflightFile();
  absl::Status PublishReserved();
  // Lists the folder, removing stale temporaries and in-flight files.
  absl::StatusOr<FolderState> ScanFolder() const;
  // ScanFolder into listing_, and the totals it counts, written.
  absl::StatusOr<Totals> Rescan(FolderLock& lock);
  bool ListingIsFresh() const;
  // An entry removed: out of listing_, its hint and read time dropped.
  void Forget(const std::string& name);
  // Evicts unpinned entries, in eviction order, until entries + every
  // reservation + n <= limit, and returns the totals (n not included);
  // RESOURCE_EXHAUSTED (nothing evicted) if the pinned entries leave no
  // room. With !must_fit, evicts what it can and never fails for lack of
  // room (Open, over a smaller limit).
  absl::StatusOr<Totals> MakeRoom(FolderLock& lock, uint64_t n, bool must_fit);
  // One try of MakeRoom's from listing_: whether t now fits n; *pinned is
  // what the unevictable entries hold by the probe.
  absl::StatusOr<bool> EvictFromListing(Totals& t, uint64_t n, bool must_fit, uint64_t* pinned);
  struct EvictionCandidate {
    const cache_internal::CacheFile* file;  // in listing_
    bool hinted;
    uint64_t next_use;
    int64_t last_use_ns;
  };
  // listing_ as a heap (std::make_heap with EvictsLater): the first to evict
  // on top. O(n) to build, O(log n) a pop: Reserve usually evicts one.
  std::vector<EvictionCandidate> EvictionHeap() const;
  // Hinted entries go first, farthest next use first; then the others,
  // least recently used first.
  static bool EvictsLater(const EvictionCandidate& a, const EvictionCandidate& b);
  // LOCK_EX|LOCK_NB on an entry: the descriptor if unpinned, else invalid.
  absl::StatusOr<cache_internal::UniqueFd> LockForEviction(
      const cache_internal::CacheFile& file) const;
  // Opens and pins the entry `name`: entry is nullptr when absent or being
  // evicted, and also when damaged (wrong size; `damaged` is then set).
  struct PinResult {
    std::shared_ptr<const Entry> entry;
    bool damaged = false;
    ino_t inode = 0;
  };
  absl::StatusOr<PinResult> TryPin(const std::string& name, uint64_t length);
  absl::StatusOr<std::shared_ptr<const Entry>> MapPinned(cache_internal::UniqueFd fd,
                                                         const std::string& name,
                                                         uint64_t length);
  // Removes dir/name if `fd` is still that file, and counts it off.
  absl::Status RemoveEntry(FolderLock& lock, const std::string& name, int fd);
  // Removes a damaged entry unless someone holds it (takes the folder lock).
  void DropDamaged(const std::string& name, ino_t inode);
  // Sets the entry's mtime to now (strictly after the last touch).
  void Touch(int fd, const std::string& name);

  const std::string dir_;
  const uint64_t limit_;
  const pid_t owner_pid_;  // the process that opened it (see fork() above)
  std::atomic<int64_t> last_touch_ns_{0};

  // Guards the members up to hints_mu_ (and the folder, with the flock).
  mutable std::mutex folder_mu_;
  cache_internal::UniqueFd inflight_fd_;
  std::string inflight_name_;
  uint64_t reserved_ = 0;
  // The entries as last listed, less those removed since, plus this
  // process's inserts.
  absl::flat_hash_map<std::string, cache_internal::CacheFile> listing_;
  std::optional<std::chrono::steady_clock::time_point> listing_time_;

  mutable std::mutex hints_mu_;  // guards the next two
  absl::flat_hash_map<std::string, uint64_t> next_use_;
  // This process's reads since the listing: name -> the mtime it set.
  absl::flat_hash_map<std::string, int64_t> touched_;
};

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_CACHE_LOCAL_EXTENT_CACHE_H_
