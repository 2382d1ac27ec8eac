// LocalExtentCache's entries: Find, Insert, pinning and mapping, recency
// and next-use hints (the folder's accounting and eviction are in
// local_extent_cache.cc).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <random>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "record/cache/local_extent_cache.h"
#include "record/errors.h"
#include "record/status_macros.h"

namespace shardfeed {

using cache_internal::EntryFileName;
using cache_internal::Flock;
using cache_internal::OpenInFolder;
using cache_internal::UniqueFd;
using cache_internal::UnlinkIfSameFile;

namespace {

std::mutex g_hook_mu;
std::function<void()>* g_mid_write_hook = nullptr;  // guarded by g_hook_mu

void RunMidWriteHook() {
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(g_hook_mu);
    if (g_mid_write_hook == nullptr) return;
    hook = *g_mid_write_hook;
  }
  hook();
}

// An entry mapped read-only; the descriptor holds the LOCK_SH that pins it.
class MappedEntry : public ExtentCache::Entry {
 public:
  MappedEntry(UniqueFd fd, const void* data, size_t size)
      : fd_(std::move(fd)), data_(data), size_(size) {}
  ~MappedEntry() override {
    if (size_ > 0) ::munmap(const_cast<void*>(data_), size_);
  }
  MappedEntry(const MappedEntry&) = delete;
  MappedEntry& operator=(const MappedEntry&) = delete;

  absl::string_view bytes() const override {
    return absl::string_view(static_cast<const char*>(data_), size_);
  }

 private:
  UniqueFd fd_;
  const void* data_;
  size_t size_;
};

// Temporaries are named by pid and a process-wide number from here: ranks in
// separate PID namespaces (containers, often all pid 1) get apart too.
uint64_t RandomStart() {
  std::random_device random;
  return (uint64_t{random()} << 32 | random()) >> 1;
}

std::string DescribeKey(const ExtentKey& key) {
  return absl::StrCat(key.object, " [", key.offset, ", +", key.length, ") etag ", key.etag);
}

}  // namespace

void LocalExtentCache::SetMidWriteHookForTesting(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(g_hook_mu);
  delete g_mid_write_hook;
  g_mid_write_hook = hook ? new std::function<void()>(std::move(hook)) : nullptr;
}

absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> LocalExtentCache::Find(
    const ExtentKey& key) {
  const std::string name = EntryFileName(key);
  ASSIGN_OR_RETURN(PinResult pinned, TryPin(name, key.length));
  if (pinned.damaged) DropDamaged(name, pinned.inode);
  return pinned.entry;
}

absl::StatusOr<LocalExtentCache::PinResult> LocalExtentCache::TryPin(const std::string& name,
                                                                     uint64_t length) {
  // Two tries: a damaged entry may be replaced by a good one between the
  // open and the check that the name still means the opened file.
  for (int attempt = 0; attempt < 2; ++attempt) {
    absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, name, O_RDONLY);
    if (absl::IsNotFound(fd.status())) return PinResult{};
    if (!fd.ok()) return fd.status();
    ASSIGN_OR_RETURN(bool locked, Flock(fd->get(), LOCK_SH | LOCK_NB, PathOf(name)));
    if (!locked) return PinResult{};  // an evictor holds it: gone in a moment
    struct stat by_fd, by_name;
    if (::fstat(fd->get(), &by_fd) != 0) return IoError("cannot stat", PathOf(name), errno);
    if (::lstat(PathOf(name).c_str(), &by_name) != 0) {
      if (errno == ENOENT) return PinResult{};  // evicted before our lock
      return IoError("cannot stat", PathOf(name), errno);
    }
    if (by_fd.st_ino != by_name.st_ino || by_fd.st_dev != by_name.st_dev) continue;
    if (!S_ISREG(by_fd.st_mode) || static_cast<uint64_t>(by_fd.st_size) != length) {
      PinResult damaged;
      damaged.damaged = true;
      damaged.inode = by_fd.st_ino;
      return damaged;
    }
    Touch(fd->get(), name);
    ASSIGN_OR_RETURN(std::shared_ptr<const Entry> entry,
                     MapPinned(std::move(*fd), name, length));
    PinResult found;
    found.entry = std::move(entry);
    return found;
  }
  return PinResult{};
}

absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> LocalExtentCache::MapPinned(
    UniqueFd fd, const std::string& name, uint64_t length) {
  if (length == 0) return std::make_shared<MappedEntry>(std::move(fd), nullptr, 0);
  void* data = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (data == MAP_FAILED) return IoError("cannot map", PathOf(name), errno);
  return std::make_shared<MappedEntry>(std::move(fd), data, length);
}

absl::Status LocalExtentCache::RemoveEntry(FolderLock& lock, const std::string& name, int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return IoError("cannot stat", PathOf(name), errno);
  ASSIGN_OR_RETURN(bool removed, UnlinkIfSameFile(dir_, name, fd));
  if (!removed) return absl::OkStatus();
  Forget(name);
  ASSIGN_OR_RETURN(std::optional<Totals> t, lock.ReadTotals());
  if (!t.has_value()) return absl::OkStatus();
  t->entry_bytes -= std::min(t->entry_bytes, static_cast<uint64_t>(st.st_size));
  return lock.WriteTotals(*t);
}

void LocalExtentCache::DropDamaged(const std::string& name, ino_t inode) {
  FolderLock lock(this);
  if (!lock.status().ok()) return;
  absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, name, O_RDONLY);
  if (!fd.ok()) return;
  struct stat st;
  if (::fstat(fd->get(), &st) != 0 || st.st_ino != inode) return;  // replaced meanwhile
  absl::StatusOr<bool> locked = Flock(fd->get(), LOCK_EX | LOCK_NB, PathOf(name));
  if (!locked.ok() || !*locked) return;
  (void)RemoveEntry(lock, name, fd->get());
}

absl::StatusOr<std::shared_ptr<const ExtentCache::Entry>> LocalExtentCache::Insert(
    const ExtentKey& key, Reservation reservation, absl::string_view bytes) {
  if (ReservationOwner(reservation) != this) {
    return absl::InvalidArgumentError(
        absl::StrCat(dir_, ": Insert of ", DescribeKey(key), " with a reservation of another cache"));
  }
  if (bytes.size() != key.length) {
    return absl::InvalidArgumentError(absl::StrCat(dir_, ": Insert of ", DescribeKey(key), ": got ",
                                                   bytes.size(), " bytes"));
  }
  if (reservation.bytes() < bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(dir_, ": Insert of ", DescribeKey(key),
                                                   ": the reservation holds only ",
                                                   reservation.bytes(), " bytes"));
  }
  const uint64_t reserved = TakeReservedBytes(reservation);
  absl::Cleanup give_back = [this, reserved] { Unreserve(reserved); };

  const std::string name = EntryFileName(key);
  // The number is process-wide: two caches on one folder in one process
  // must not pick the same temporary for the same key.
  static std::atomic<uint64_t> next_temp{RandomStart()};
  const std::string temp = cache_internal::TempFileName(name, ::getpid(), next_temp++);
  UniqueFd fd;
  {
    // Created and locked in one step under the folder lock, so no listing
    // ever sees it unlocked (which would mean its writer died).
    FolderLock lock(this);
    RETURN_IF_ERROR(lock.status());
    ASSIGN_OR_RETURN(fd, OpenInFolder(dir_, temp, O_RDWR | O_CREAT | O_EXCL));
    ASSIGN_OR_RETURN(bool locked, Flock(fd.get(), LOCK_EX | LOCK_NB, PathOf(temp)));
    if (!locked) return absl::InternalError(absl::StrCat(PathOf(temp), ": new file is locked"));
  }
  absl::Cleanup remove_temp = [this, &temp] { ::unlink(PathOf(temp).c_str()); };
  const size_t half = bytes.size() / 2;
  RETURN_IF_ERROR(cache_internal::WriteAll(fd.get(), bytes.substr(0, half), PathOf(temp)));
  RunMidWriteHook();
  RETURN_IF_ERROR(cache_internal::WriteAll(fd.get(), bytes.substr(half), PathOf(temp)));
  // Not fsync'd (it would halve the fill rate here, a cache is not the only
  // copy, and a power loss leaves a short or empty file on journaling file
  // systems, which fails the size check); wrong bytes of the right size fail
  // the records' CRCs in the reader, which then Drop()s the entry.

  {
    FolderLock lock(this);
    RETURN_IF_ERROR(lock.status());
    ASSIGN_OR_RETURN(PinResult existing, TryPin(name, key.length));
    ASSIGN_OR_RETURN(std::optional<Totals> t, lock.ReadTotals());
    if (existing.entry == nullptr) {
      // Absent, or damaged (replaced by this one: counted off).
      struct stat old;
      if (::lstat(PathOf(name).c_str(), &old) == 0 && t.has_value()) {
        t->entry_bytes -= std::min(t->entry_bytes, static_cast<uint64_t>(old.st_size));
      }
      if (::rename(PathOf(temp).c_str(), PathOf(name).c_str()) != 0) {
        return IoError(absl::StrCat("cannot rename to ", name), PathOf(temp), errno);
      }
      std::move(remove_temp).Cancel();
      if (t.has_value()) t->entry_bytes += key.length;
      struct stat st;
      if (::fstat(fd.get(), &st) == 0) {
        listing_[name] = cache_internal::CacheFile{name, cache_internal::CacheFileKind::kEntry,
                                                   key.length, 0, st.st_ino};
      }
    }
    // The entry and the end of its reservation are counted in one write:
    // until it, the reservation (>= the entry) still covers it.
    reserved_ -= std::min(reserved, reserved_);
    std::move(give_back).Cancel();
    RETURN_IF_ERROR(PublishReserved());
    if (t.has_value()) {
      t->reserved_bytes -= std::min(t->reserved_bytes, reserved);
      RETURN_IF_ERROR(lock.WriteTotals(*t));
    }
    if (existing.entry != nullptr) return existing.entry;  // stored meanwhile
    // Exclusive to shared: not atomic in flock, but no evictor can come
    // between while this thread holds the folder lock.
    RETURN_IF_ERROR(Flock(fd.get(), LOCK_SH, PathOf(name)).status());
  }
  Touch(fd.get(), name);
  return MapPinned(std::move(fd), name, key.length);
}

absl::Status LocalExtentCache::Drop(const ExtentKey& key) {
  const std::string name = EntryFileName(key);
  FolderLock lock(this);
  RETURN_IF_ERROR(lock.status());
  absl::StatusOr<UniqueFd> fd = OpenInFolder(dir_, name, O_RDONLY);
  if (absl::IsNotFound(fd.status())) return absl::OkStatus();
  if (!fd.ok()) return fd.status();
  // Readers that hold it keep their mapping (an unlinked file lives on
  // while mapped); the name, and so every later Find, is gone.
  return RemoveEntry(lock, name, fd->get());
}

void LocalExtentCache::SetNextUse(const ExtentKey& key, uint64_t position) {
  std::string name = EntryFileName(key);
  std::lock_guard<std::mutex> lock(hints_mu_);
  next_use_[std::move(name)] = position;
}

absl::StatusOr<uint64_t> LocalExtentCache::used_bytes() const {
  ASSIGN_OR_RETURN(Usage u, usage());
  return u.entry_bytes;
}

absl::StatusOr<LocalExtentCache::Usage> LocalExtentCache::usage() const {
  FolderLock lock(this);
  RETURN_IF_ERROR(lock.status());
  ASSIGN_OR_RETURN(FolderState state, ScanFolder());
  return Usage{state.entry_bytes, reserved_ + state.others_reserved};
}

absl::StatusOr<LocalExtentCache::Usage> LocalExtentCache::counted_usage() const {
  FolderLock lock(this);
  RETURN_IF_ERROR(lock.status());
  ASSIGN_OR_RETURN(std::optional<Totals> t, lock.ReadTotals());
  if (!t.has_value()) return absl::NotFoundError(absl::StrCat(dir_, ": no totals yet"));
  return Usage{t->entry_bytes, t->reserved_bytes};
}

void LocalExtentCache::Touch(int fd, const std::string& name) {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  int64_t ns = int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
  int64_t last = last_touch_ns_.load();
  do {
    ns = std::max(ns, last + 1);
  } while (!last_touch_ns_.compare_exchange_weak(last, ns));
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ns / 1000000000;
  times[0].tv_nsec = times[1].tv_nsec = ns % 1000000000;
  // Exact times need the file's owner; another user sharing the folder
  // still marks the use, at the kernel clock's coarser resolution.
  if (::futimens(fd, times) != 0) ::futimens(fd, nullptr);
  std::lock_guard<std::mutex> lock(hints_mu_);
  touched_[name] = ns;
}

}  // namespace shardfeed
