// The files of an extent cache folder and the POSIX pieces the cache is made
// of: owned descriptors, flock(2) locks, the names the cache writes, and a
// listing of the folder.
//
// Names (everything else in the folder is a user's and is never touched):
//   <64 hex>.extent                    an entry: exactly the extent's bytes;
//                                      the hex is SHA-256 of the whole key
//   <64 hex>.extent.tmp-<pid>-<n>      an entry being written; its writer
//                                      holds LOCK_EX on it until it is renamed
//   .inflight-<pid>-<n>                one open cache's bytes reserved for
//                                      fetches in flight (8 bytes, little
//                                      endian); its owner holds LOCK_EX on it
//   .lock                              the folder lock (LOCK_EX, held briefly)
// A temporary or in-flight file whose LOCK_EX can be taken has lost its
// owner (flock locks die with their process): it is stale.
//
// Pins: whoever maps an entry holds LOCK_SH on it; an evictor takes
// LOCK_EX|LOCK_NB and skips what it cannot lock. flock locks belong to an
// open file description, so two descriptors of one process conflict like
// two processes: one process's own pins are seen the same way.
//
// Threading: the functions are thread-safe; a UniqueFd is not shared.
// Errors: absl::Status naming the file and strerror().
#ifndef SHARDFEED_RECORD_CACHE_CACHE_FILES_H_
#define SHARDFEED_RECORD_CACHE_CACHE_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/cache/extent_cache.h"

namespace shardfeed {
namespace cache_internal {

// A file descriptor closed on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

enum class CacheFileKind { kEntry, kTemp, kInflight, kOther };

// What the cache's naming scheme says `name` is (kOther: not ours).
CacheFileKind ClassifyCacheFileName(absl::string_view name);

// "<sha256 of the key, hex>.extent". Every field of the key takes part, each
// length-prefixed, so two keys never share a name short of a SHA-256
// collision.
std::string EntryFileName(const ExtentKey& key);
std::string TempFileName(absl::string_view entry_name, pid_t pid, uint64_t n);
std::string InflightFileName(pid_t pid, uint64_t n);
inline constexpr char kFolderLockName[] = ".lock";

// flock(fd, operation) retried on EINTR. With LOCK_NB, returns false when
// another description holds a conflicting lock; errors otherwise.
absl::StatusOr<bool> Flock(int fd, int operation, absl::string_view path);

// One file of the cache's own naming scheme, as listed.
struct CacheFile {
  std::string name;
  CacheFileKind kind = CacheFileKind::kOther;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  ino_t inode = 0;
};

// The cache's own regular files in `dir` (kOther names and anything not a
// regular file are left out). A file that vanishes while listed is left out.
absl::StatusOr<std::vector<CacheFile>> ListCacheFolder(const std::string& dir);

// Opens dir/name with `flags` (O_CLOEXEC|O_NOFOLLOW added). NOT_FOUND when
// absent.
absl::StatusOr<UniqueFd> OpenInFolder(const std::string& dir, absl::string_view name,
                                      int flags, mode_t mode = 0644);

// Removes dir/name if it is still the file `fd` refers to (same inode):
// the caller holds LOCK_EX on `fd` and the folder lock. Returns whether it
// removed it.
absl::StatusOr<bool> UnlinkIfSameFile(const std::string& dir, absl::string_view name, int fd);

// Writes all of `data` at offset 0.. (write(2), EINTR and short writes
// retried).
absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path);

}  // namespace cache_internal
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_CACHE_CACHE_FILES_H_
