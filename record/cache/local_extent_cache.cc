#include "record/cache/local_extent_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "record/errors.h"
#include "record/status_macros.h"

namespace shardfeed {

using cache_internal::CacheFile;
using cache_internal::CacheFileKind;
using cache_internal::Flock;
using cache_internal::OpenInFolder;
using cache_internal::UniqueFd;
using cache_internal::UnlinkIfSameFile;

namespace {

std::string MiB(uint64_t bytes) { return absl::StrCat((bytes + (1 << 20) - 1) >> 20, " MiB"); }

// a + b, saturating (a request larger than any limit must not wrap around).
uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

LocalExtentCache::FolderLock::FolderLock(const LocalExtentCache* cache)
    : lock_(cache->folder_mu_), path_(cache->PathOf(cache_internal::kFolderLockName)) {
  if (::getpid() != cache->owner_pid_) {
    status_ = absl::FailedPreconditionError(absl::StrCat(
        cache->dir_, ": extent cache opened by process ", cache->owner_pid_,
        " used in its forked child ", ::getpid(), "; open the cache again in the child"));
    return;
  }
  absl::StatusOr<UniqueFd> fd =
      OpenInFolder(cache->dir_, cache_internal::kFolderLockName, O_RDWR | O_CREAT, 0666);
  if (!fd.ok()) {
    status_ = fd.status();
    return;
  }
  status_ = Flock(fd->get(), LOCK_EX, path_).status();
  fd_ = std::move(*fd);
}

// The totals live in the lock file: magic, entry bytes, reserved bytes.
absl::StatusOr<std::optional<LocalExtentCache::Totals>> LocalExtentCache::FolderLock::ReadTotals()
    const {
  char buf[kTotalsSize];
  ssize_t r;
  do {
    r = ::pread(fd_.get(), buf, sizeof(buf), 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) return IoError("cannot read", path_, errno);
  if (r != static_cast<ssize_t>(sizeof(buf)) || std::memcmp(buf, kTotalsMagic, 8) != 0) {
    return std::nullopt;  // new, or not ours to trust: a listing recounts
  }
  Totals t;
  std::memcpy(&t.entry_bytes, buf + 8, 8);
  std::memcpy(&t.reserved_bytes, buf + 16, 8);
  return t;
}

absl::Status LocalExtentCache::FolderLock::WriteTotals(const Totals& t) {
  char buf[kTotalsSize];
  std::memcpy(buf, kTotalsMagic, 8);
  std::memcpy(buf + 8, &t.entry_bytes, 8);
  std::memcpy(buf + 16, &t.reserved_bytes, 8);
  ssize_t w;
  do {
    w = ::pwrite(fd_.get(), buf, sizeof(buf), 0);
  } while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(sizeof(buf))) {
    return IoError("cannot write", path_, w < 0 ? errno : EIO);
  }
  return absl::OkStatus();
}

LocalExtentCache::LocalExtentCache(std::string dir, uint64_t limit)
    : dir_(std::move(dir)), limit_(limit), owner_pid_(::getpid()) {}

absl::StatusOr<std::shared_ptr<LocalExtentCache>> LocalExtentCache::Create(std::string dir,
                                                                           uint64_t limit_bytes) {
  std::shared_ptr<LocalExtentCache> cache(new LocalExtentCache(std::move(dir), limit_bytes));
  FolderLock lock(cache.get());
  RETURN_IF_ERROR(lock.status());
  RETURN_IF_ERROR(cache->CreateInflightFile());
  // Removes what crashed processes left, and recounts.
  RETURN_IF_ERROR(cache->Rescan(lock).status());
  // A folder left fuller by a cache with a larger limit shrinks to this one.
  RETURN_IF_ERROR(cache->MakeRoom(lock, 0, /*must_fit=*/false).status());
  return cache;
}

LocalExtentCache::~LocalExtentCache() {
  FolderLock lock(this);
  // Not in a forked child: the in-flight file is the parent's.
  if (lock.status().ok() && inflight_fd_.valid()) {
    (void)UnlinkIfSameFile(dir_, inflight_name_, inflight_fd_.get());
  }
}

std::string LocalExtentCache::PathOf(absl::string_view name) const {
  return absl::StrCat(dir_, "/", name);
}

absl::Status LocalExtentCache::CreateInflightFile() {
  static std::atomic<uint64_t> next{0};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::string name = cache_internal::InflightFileName(::getpid(), next++);
    absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, name, O_RDWR | O_CREAT | O_EXCL);
    if (absl::IsAlreadyExists(fd.status())) continue;  // a dead process's, same pid
    if (!fd.ok()) return fd.status();
    ASSIGN_OR_RETURN(bool locked, Flock(fd->get(), LOCK_EX | LOCK_NB, PathOf(name)));
    if (!locked) return absl::InternalError(absl::StrCat(PathOf(name), ": new file is locked"));
    inflight_fd_ = std::move(*fd);
    inflight_name_ = std::move(name);
    return PublishReserved();
  }
  return absl::InternalError(absl::StrCat(dir_, ": no free in-flight file name"));
}

absl::Status LocalExtentCache::PublishReserved() {
  const uint64_t value = reserved_;
  ssize_t w;
  do {
    w = ::pwrite(inflight_fd_.get(), &value, sizeof(value), 0);
  } while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(sizeof(value))) {
    return IoError("cannot write", PathOf(inflight_name_), w < 0 ? errno : EIO);
  }
  return absl::OkStatus();
}

absl::StatusOr<LocalExtentCache::FolderState> LocalExtentCache::ScanFolder() const {
  ASSIGN_OR_RETURN(std::vector<CacheFile> files, cache_internal::ListCacheFolder(dir_));
  FolderState state;
  for (CacheFile& f : files) {
    if (f.kind == CacheFileKind::kEntry) {
      state.entry_bytes += f.size;
      state.entries.push_back(std::move(f));
      continue;
    }
    if (f.kind == CacheFileKind::kInflight && f.name == inflight_name_) continue;
    absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, f.name, O_RDONLY);
    if (absl::IsNotFound(fd.status())) continue;
    if (!fd.ok()) return fd.status();
    ASSIGN_OR_RETURN(bool owner_gone, Flock(fd->get(), LOCK_EX | LOCK_NB, PathOf(f.name)));
    if (owner_gone) {  // its writer or cache died: stale
      RETURN_IF_ERROR(UnlinkIfSameFile(dir_, f.name, fd->get()).status());
      continue;
    }
    if (f.kind == CacheFileKind::kInflight) {
      uint64_t reserved = 0;
      if (::pread(fd->get(), &reserved, sizeof(reserved), 0) == sizeof(reserved)) {
        state.others_reserved = SaturatingAdd(state.others_reserved, reserved);
      }
    }
  }
  return state;
}

absl::StatusOr<LocalExtentCache::Totals> LocalExtentCache::Rescan(FolderLock& lock) {
  ASSIGN_OR_RETURN(FolderState state, ScanFolder());
  listing_.clear();
  for (CacheFile& f : state.entries) {
    std::string name = f.name;
    listing_.emplace(std::move(name), std::move(f));
  }
  listing_time_ = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> hints(hints_mu_);
    touched_.clear();  // the listing has the mtimes now
    // Hints of entries no longer in the folder are spent: the plan hints an
    // extent again when it is next released (and the map stays as small as
    // the folder, not as the dataset).
    absl::erase_if(next_use_, [&](const auto& hint) { return !listing_.contains(hint.first); });
  }
  const Totals t{state.entry_bytes, SaturatingAdd(reserved_, state.others_reserved)};
  RETURN_IF_ERROR(lock.WriteTotals(t));
  return t;
}

void LocalExtentCache::Forget(const std::string& name) {
  listing_.erase(name);
  std::lock_guard<std::mutex> lock(hints_mu_);
  next_use_.erase(name);
  touched_.erase(name);
}

bool LocalExtentCache::ListingIsFresh() const {
  return listing_time_.has_value() &&
         std::chrono::steady_clock::now() - *listing_time_ < kListingMaxAge;
}

bool LocalExtentCache::EvictsLater(const EvictionCandidate& a, const EvictionCandidate& b) {
  if (a.hinted != b.hinted) return !a.hinted;
  if (a.hinted && a.next_use != b.next_use) return a.next_use < b.next_use;
  if (!a.hinted && a.last_use_ns != b.last_use_ns) return a.last_use_ns > b.last_use_ns;
  return a.file->name > b.file->name;
}

std::vector<LocalExtentCache::EvictionCandidate> LocalExtentCache::EvictionHeap() const {
  std::vector<EvictionCandidate> heap;
  heap.reserve(listing_.size());
  {
    std::lock_guard<std::mutex> lock(hints_mu_);
    for (const auto& [name, f] : listing_) {
      auto hint = next_use_.find(name);
      auto touch = touched_.find(name);
      heap.push_back({&f, hint != next_use_.end(), hint != next_use_.end() ? hint->second : 0,
                      touch != touched_.end() ? touch->second : f.mtime_ns});
    }
  }
  std::make_heap(heap.begin(), heap.end(), EvictsLater);
  return heap;
}

absl::StatusOr<UniqueFd> LocalExtentCache::LockForEviction(const CacheFile& file) const {
  absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, file.name, O_RDONLY);
  if (absl::IsNotFound(fd.status())) return UniqueFd();
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) return IoError("cannot stat", PathOf(file.name), errno);
  if (st.st_ino != file.inode) return UniqueFd();
  ASSIGN_OR_RETURN(bool unpinned, Flock(fd->get(), LOCK_EX | LOCK_NB, PathOf(file.name)));
  if (!unpinned) return UniqueFd();
  return std::move(*fd);
}

absl::StatusOr<bool> LocalExtentCache::EvictFromListing(Totals& t, uint64_t n, bool must_fit,
                                                       uint64_t* pinned) {
  const uint64_t wanted = SaturatingAdd(t.reserved_bytes, n);
  auto fits = [&](uint64_t entry_bytes) { return SaturatingAdd(entry_bytes, wanted) <= limit_; };
  std::vector<EvictionCandidate> heap = EvictionHeap();
  auto next_candidate = [&heap]() -> const CacheFile* {
    if (heap.empty()) return nullptr;
    std::pop_heap(heap.begin(), heap.end(), EvictsLater);
    const CacheFile* file = heap.back().file;
    heap.pop_back();
    return file;
  };
  // Probe first, evict second: a request that cannot fit evicts nothing.
  std::vector<const CacheFile*> chosen;
  uint64_t left = t.entry_bytes;
  while (!fits(left)) {
    const CacheFile* file = next_candidate();
    if (file == nullptr) break;
    ASSIGN_OR_RETURN(UniqueFd fd, LockForEviction(*file));
    if (!fd.valid()) continue;  // pinned (or gone)
    chosen.push_back(file);
    left -= std::min(left, file->size);
  }
  *pinned = left;
  if (!fits(left) && must_fit) return false;

  std::vector<std::string> gone;  // erased from listing_ at the end (the heap points there)
  auto evict = [&](const CacheFile& file) -> absl::Status {
    ASSIGN_OR_RETURN(UniqueFd fd, LockForEviction(file));
    if (!fd.valid()) return absl::OkStatus();  // pinned since the probe
    ASSIGN_OR_RETURN(bool removed, UnlinkIfSameFile(dir_, file.name, fd.get()));
    if (removed) t.entry_bytes -= std::min(t.entry_bytes, file.size);
    gone.push_back(file.name);
    return absl::OkStatus();
  };
  absl::Status status;
  for (const CacheFile* file : chosen) {
    if (status.ok()) status = evict(*file);
  }
  // Entries pinned between the probe and now: take the next ones instead.
  while (status.ok() && !fits(t.entry_bytes)) {
    const CacheFile* file = next_candidate();
    if (file == nullptr) break;
    status = evict(*file);
  }
  for (const std::string& name : gone) Forget(name);
  RETURN_IF_ERROR(status);
  return fits(t.entry_bytes);
}

absl::StatusOr<LocalExtentCache::Totals> LocalExtentCache::MakeRoom(FolderLock& lock, uint64_t n,
                                                                   bool must_fit) {
  ASSIGN_OR_RETURN(std::optional<Totals> known, lock.ReadTotals());
  const bool fresh_listing = ListingIsFresh();
  auto fits = [&](const Totals& t) {
    return SaturatingAdd(SaturatingAdd(t.entry_bytes, t.reserved_bytes), n) <= limit_;
  };
  // The common case: room, by the totals every cache keeps under the lock
  // (never below the truth), recounted from a listing now and then.
  if (known.has_value() && fresh_listing && fits(*known)) return *known;

  bool recounted = !known.has_value() || !fresh_listing;
  Totals t;
  if (recounted) {
    ASSIGN_OR_RETURN(t, Rescan(lock));
  } else {
    t = *known;
  }
  for (;;) {
    uint64_t pinned = 0;
    ASSIGN_OR_RETURN(bool room, EvictFromListing(t, n, must_fit, &pinned));
    RETURN_IF_ERROR(lock.WriteTotals(t));
    if (room || (!must_fit && recounted)) return t;
    if (recounted) {
      const uint64_t needed = SaturatingAdd(SaturatingAdd(pinned, t.reserved_bytes), n);
      return absl::ResourceExhaustedError(absl::StrCat(
          dir_, ": cache_limit ", limit_, " bytes (", MiB(limit_), ") is too small: ", pinned,
          " bytes pinned by readers + ", t.reserved_bytes,
          " bytes reserved for fetches in flight + ", n, " bytes requested; needs at least ",
          needed, " bytes (", MiB(needed), ")"));
    }
    // The listing was a little old: count again before refusing.
    ASSIGN_OR_RETURN(t, Rescan(lock));
    recounted = true;
  }
}

absl::StatusOr<ExtentCache::Reservation> LocalExtentCache::Reserve(uint64_t n) {
  FolderLock lock(this);
  RETURN_IF_ERROR(lock.status());
  ASSIGN_OR_RETURN(Totals t, MakeRoom(lock, n, /*must_fit=*/true));
  reserved_ += n;
  t.reserved_bytes += n;
  absl::Status published = PublishReserved();
  if (published.ok()) published = lock.WriteTotals(t);
  if (!published.ok()) {
    reserved_ -= n;
    (void)PublishReserved();
    return published;
  }
  return MakeReservation(n);
}

void LocalExtentCache::Unreserve(uint64_t bytes) {
  // A destructor's path: nothing to report errors to. Totals left high
  // are safe (a listing recounts them).
  FolderLock lock(this);
  // Unlocked (a forked child): the in-flight file is not this process's.
  if (!lock.status().ok()) return;
  bytes = std::min(bytes, reserved_);
  reserved_ -= bytes;
  (void)PublishReserved();
  absl::StatusOr<std::optional<Totals>> t = lock.ReadTotals();
  if (t.ok() && t->has_value()) {
    (*t)->reserved_bytes -= std::min(bytes, (*t)->reserved_bytes);
    (void)lock.WriteTotals(**t);
  }
}

}  // namespace shardfeed
