#include "record/cache/local_extent_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <cerrno>
#include <ctime>
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
    : lock_(cache->folder_mu_) {
  absl::StatusOr<UniqueFd> fd =
      OpenInFolder(cache->dir_, cache_internal::kFolderLockName, O_RDWR | O_CREAT, 0666);
  if (!fd.ok()) {
    status_ = fd.status();
    return;
  }
  status_ = Flock(fd->get(), LOCK_EX, cache->PathOf(cache_internal::kFolderLockName)).status();
  fd_ = std::move(*fd);
}

LocalExtentCache::LocalExtentCache(std::string dir, uint64_t limit)
    : dir_(std::move(dir)), limit_(limit) {
  // Temporaries are named by pid and this number: a random start keeps
  // ranks in separate PID namespaces (containers, all pid 1) apart.
  std::random_device random;
  next_temp_ = (uint64_t{random()} << 32 | random()) >> 1;
}

absl::StatusOr<std::shared_ptr<LocalExtentCache>> LocalExtentCache::Create(std::string dir,
                                                                           uint64_t limit_bytes) {
  std::shared_ptr<LocalExtentCache> cache(new LocalExtentCache(std::move(dir), limit_bytes));
  FolderLock lock(cache.get());
  RETURN_IF_ERROR(lock.status());
  RETURN_IF_ERROR(cache->CreateInflightFile());
  // A folder left fuller by a cache with a larger limit shrinks to this one.
  RETURN_IF_ERROR(cache->MakeRoom(0, /*must_fit=*/false));
  return cache;
}

LocalExtentCache::~LocalExtentCache() {
  FolderLock lock(this);
  if (inflight_fd_.valid()) {
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

std::vector<const CacheFile*> LocalExtentCache::EvictionOrder(const FolderState& state) const {
  struct Candidate {
    const CacheFile* file;
    bool hinted;
    uint64_t next_use;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(state.entries.size());
  {
    std::lock_guard<std::mutex> lock(hints_mu_);
    for (const CacheFile& f : state.entries) {
      auto it = next_use_.find(f.name);
      candidates.push_back({&f, it != next_use_.end(), it != next_use_.end() ? it->second : 0});
    }
  }
  // Hinted entries first, farthest next use first; then the others, least
  // recently used first.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.hinted != b.hinted) return a.hinted;
    if (a.hinted && a.next_use != b.next_use) return a.next_use > b.next_use;
    if (!a.hinted && a.file->mtime_ns != b.file->mtime_ns) {
      return a.file->mtime_ns < b.file->mtime_ns;
    }
    return a.file->name < b.file->name;
  });
  std::vector<const CacheFile*> order;
  order.reserve(candidates.size());
  for (const Candidate& c : candidates) order.push_back(c.file);
  return order;
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

absl::Status LocalExtentCache::MakeRoom(uint64_t n, bool must_fit) {
  ASSIGN_OR_RETURN(FolderState state, ScanFolder());
  const uint64_t reserved_all = SaturatingAdd(reserved_, state.others_reserved);
  const uint64_t wanted = SaturatingAdd(reserved_all, n);
  auto fits = [&](uint64_t entry_bytes) { return SaturatingAdd(entry_bytes, wanted) <= limit_; };
  if (fits(state.entry_bytes)) return absl::OkStatus();

  // Probe first, evict second: a request that cannot fit evicts nothing.
  const std::vector<const CacheFile*> order = EvictionOrder(state);
  std::vector<const CacheFile*> chosen;
  uint64_t left = state.entry_bytes;
  size_t next = 0;
  for (; next < order.size() && !fits(left); ++next) {
    ASSIGN_OR_RETURN(UniqueFd fd, LockForEviction(*order[next]));
    if (!fd.valid()) continue;  // pinned
    chosen.push_back(order[next]);
    left -= order[next]->size;
  }
  auto too_small = [&](uint64_t pinned) {
    return absl::ResourceExhaustedError(absl::StrCat(
        dir_, ": cache_limit ", limit_, " bytes (", MiB(limit_), ") is too small: ", pinned,
        " bytes pinned by readers + ", reserved_all, " bytes reserved for fetches in flight + ", n,
        " bytes requested; needs at least ", SaturatingAdd(pinned, wanted), " bytes (",
        MiB(SaturatingAdd(pinned, wanted)), ")"));
  };
  if (!fits(left) && must_fit) return too_small(left);

  uint64_t used = state.entry_bytes;
  auto evict = [&](const CacheFile& file) -> absl::Status {
    ASSIGN_OR_RETURN(UniqueFd fd, LockForEviction(file));
    if (!fd.valid()) return absl::OkStatus();  // pinned since the probe
    ASSIGN_OR_RETURN(bool removed, UnlinkIfSameFile(dir_, file.name, fd.get()));
    if (removed) used -= file.size;
    return absl::OkStatus();
  };
  for (const CacheFile* file : chosen) RETURN_IF_ERROR(evict(*file));
  // Entries pinned between the probe and now: take the next ones instead.
  for (; next < order.size() && !fits(used); ++next) RETURN_IF_ERROR(evict(*order[next]));
  if (!fits(used) && must_fit) return too_small(used);
  return absl::OkStatus();
}

absl::StatusOr<ExtentCache::Reservation> LocalExtentCache::Reserve(uint64_t n) {
  FolderLock lock(this);
  RETURN_IF_ERROR(lock.status());
  RETURN_IF_ERROR(MakeRoom(n, /*must_fit=*/true));
  reserved_ += n;
  if (absl::Status published = PublishReserved(); !published.ok()) {
    reserved_ -= n;
    return published;
  }
  return MakeReservation(n);
}

void LocalExtentCache::Unreserve(uint64_t bytes) {
  FolderLock lock(this);
  reserved_ -= std::min(bytes, reserved_);
  (void)PublishReserved();  // a destructor's path: nothing to report to
}

}  // namespace shardfeed
