#include "record/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "absl/strings/str_cat.h"
#include "record/crc32c.h"
#include "record/errors.h"
#include "record/path_util.h"
#include "record/remote/remote_files.h"
#include "record/storage.h"
#include "record/status_macros.h"

namespace shardfeed {

absl::StatusOr<std::unique_ptr<ReadableFile>> ReadableFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return IoError("cannot stat", path, e);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<ReadableFile>(
      new ReadableFile(path, fd, static_cast<uint64_t>(st.st_size)));
}

ReadableFile::~ReadableFile() { ::close(fd_); }

absl::StatusOr<size_t> ReadableFile::Read(char* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd_, dst + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError("read failed", path_, errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

absl::StatusOr<size_t> ReadableFile::ReadAt(uint64_t offset, char* dst, size_t n) const {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return IoError("read failed", path_, errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

absl::Status ReadableFile::Seek(uint64_t offset) {
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
    return IoError("seek failed", path_, errno);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  if (IsRemotePath(path)) return remote::ReadObject(path);
  return ReadLocalFile(path);
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 bool overwrite) {
  if (IsRemotePath(path)) {
    if (!overwrite && PathExists(path)) {
      return absl::AlreadyExistsError(
          absl::StrCat(path, ": already exists (use --overwrite to replace it)"));
    }
    return remote::WriteObject(path, std::string(contents));
  }
  ASSIGN_OR_RETURN(auto out, AtomicOutputFile::Create(path, overwrite));
  RETURN_IF_ERROR(out->Append(contents));
  return out->Commit();
}

bool PathExists(const std::string& path) {
  if (IsRemotePath(path)) {
    absl::StatusOr<PathKind> kind = StatPath(path);
    return kind.ok() && *kind != PathKind::kMissing;
  }
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::unique_ptr<AtomicOutputFile>> AtomicOutputFile::Create(
    const std::string& path, bool overwrite) {
  if (!overwrite && PathExists(path)) {
    return absl::AlreadyExistsError(
        absl::StrCat(path, ": already exists (use --overwrite to replace it)"));
  }
  static std::atomic<uint64_t> counter{0};
  std::string temp = absl::StrCat(path, ".tmp-", ::getpid(), "-", counter++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", path, errno);
  return std::unique_ptr<AtomicOutputFile>(
      new AtomicOutputFile(path, std::move(temp), fd, overwrite));
}

AtomicOutputFile::~AtomicOutputFile() { Abandon(); }

absl::Status AtomicOutputFile::Append(absl::string_view data) {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": already closed"));
  }
  if (compute_crc32c_) crc32c_ = crc32c::Extend(crc32c_, data.data(), data.size());
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t w = ::write(fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return IoError("write failed", path_, errno);
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  bytes_written_ += data.size();
  return absl::OkStatus();
}

absl::Status AtomicOutputFile::Commit() {
  if (fd_ < 0) {
    return absl::FailedPreconditionError(absl::StrCat(path_, ": already closed"));
  }
  if (::fdatasync(fd_) != 0 && errno != EINVAL) {
    int e = errno;
    Abandon();
    return IoError("sync failed", path_, e);
  }
  if (::close(fd_) != 0) {
    int e = errno;
    fd_ = -1;
    Abandon();
    return IoError("close failed", path_, e);
  }
  fd_ = -1;
  if (!overwrite_ && PathExists(path_)) {
    Abandon();
    return absl::AlreadyExistsError(absl::StrCat(path_, ": appeared while writing"));
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    Abandon();
    return IoError("cannot rename temporary to final name", path_, e);
  }
  temp_path_.clear();
  return absl::OkStatus();
}

void AtomicOutputFile::Abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

absl::Status MakeDirs(const std::string& dir) {
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      std::string partial = dir.substr(0, i);
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        return IoError("cannot create directory", partial, errno);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace shardfeed
