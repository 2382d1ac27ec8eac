#include "record/cache/cache_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "record/errors.h"

namespace shardfeed {
namespace cache_internal {
namespace {

constexpr absl::string_view kEntrySuffix = ".extent";
constexpr absl::string_view kTempInfix = ".extent.tmp-";
constexpr absl::string_view kInflightPrefix = ".inflight-";
constexpr size_t kHexDigits = 64;

bool IsLowerHex(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

// "<digits>-<digits>", both non-empty.
bool IsPidAndNumber(absl::string_view s) {
  const size_t dash = s.find('-');
  if (dash == 0 || dash == absl::string_view::npos || dash + 1 == s.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != dash && !absl::ascii_isdigit(s[i])) return false;
  }
  return true;
}

void AppendLengthPrefixed(std::string* out, absl::string_view field) {
  const uint64_t n = field.size();
  out->append(reinterpret_cast<const char*>(&n), sizeof(n));
  out->append(field.data(), field.size());
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

CacheFileKind ClassifyCacheFileName(absl::string_view name) {
  if (name.size() > kHexDigits && IsLowerHex(name.substr(0, kHexDigits))) {
    const absl::string_view rest = name.substr(kHexDigits);
    if (rest == kEntrySuffix) return CacheFileKind::kEntry;
    if (absl::StartsWith(rest, kTempInfix) && IsPidAndNumber(rest.substr(kTempInfix.size()))) {
      return CacheFileKind::kTemp;
    }
    return CacheFileKind::kOther;
  }
  if (absl::StartsWith(name, kInflightPrefix) &&
      IsPidAndNumber(name.substr(kInflightPrefix.size()))) {
    return CacheFileKind::kInflight;
  }
  return CacheFileKind::kOther;
}

std::string EntryFileName(const ExtentKey& key) {
  std::string encoded = "shardfeed extent v1";
  AppendLengthPrefixed(&encoded, key.object);
  AppendLengthPrefixed(&encoded, key.etag);
  encoded.append(reinterpret_cast<const char*>(&key.offset), sizeof(key.offset));
  encoded.append(reinterpret_cast<const char*>(&key.length), sizeof(key.length));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  EVP_Digest(encoded.data(), encoded.size(), digest, &digest_size, EVP_sha256(), nullptr);
  return absl::StrCat(
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), digest_size)),
      kEntrySuffix);
}

std::string TempFileName(absl::string_view entry_name, pid_t pid, uint64_t n) {
  return absl::StrCat(entry_name, ".tmp-", pid, "-", n);
}

std::string InflightFileName(pid_t pid, uint64_t n) {
  return absl::StrCat(kInflightPrefix, pid, "-", n);
}

absl::StatusOr<bool> Flock(int fd, int operation, absl::string_view path) {
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && (operation & LOCK_NB)) return false;
    return IoError("cannot lock", path, errno);
  }
  return true;
}

absl::StatusOr<std::vector<CacheFile>> ListCacheFolder(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return IoError("cannot list the cache folder", dir, errno);
  std::vector<CacheFile> files;
  for (;;) {
    errno = 0;
    const struct dirent* e = ::readdir(d);
    if (e == nullptr) break;
    const CacheFileKind kind = ClassifyCacheFileName(e->d_name);
    if (kind == CacheFileKind::kOther) continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode)) continue;
    files.push_back(CacheFile{e->d_name, kind, static_cast<uint64_t>(st.st_size),
                              int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
                              st.st_ino});
  }
  const int error = errno;
  ::closedir(d);
  if (error != 0) return IoError("cannot list the cache folder", dir, error);
  return files;
}

absl::StatusOr<UniqueFd> OpenInFolder(const std::string& dir, absl::string_view name, int flags,
                                      mode_t mode) {
  const std::string path = absl::StrCat(dir, "/", name);
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return IoError("cannot open", path, errno);
  return UniqueFd(fd);
}

absl::StatusOr<bool> UnlinkIfSameFile(const std::string& dir, absl::string_view name, int fd) {
  const std::string path = absl::StrCat(dir, "/", name);
  struct stat by_fd, by_name;
  if (::fstat(fd, &by_fd) != 0) return IoError("cannot stat", path, errno);
  if (::lstat(path.c_str(), &by_name) != 0) {
    if (errno == ENOENT) return false;
    return IoError("cannot stat", path, errno);
  }
  if (by_fd.st_ino != by_name.st_ino || by_fd.st_dev != by_name.st_dev) return false;
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return false;
    return IoError("cannot remove", path, errno);
  }
  return true;
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path, errno);
    }
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

}  // namespace cache_internal
}  // namespace shardfeed
