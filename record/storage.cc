#include "record/storage.h"

#include <sys/stat.h>

#include <cerrno>

#include "record/errors.h"
#include "record/file.h"
#include "record/remote/remote_files.h"
#include "record/remote/url.h"
#include "record/status_macros.h"

namespace shardfeed {

bool IsRemotePath(absl::string_view path) { return remote::IsRemotePath(path); }

absl::StatusOr<std::unique_ptr<RandomAccessSource>> OpenSource(const std::string& path) {
  if (IsRemotePath(path)) return remote::OpenObject(path);
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, ReadableFile::Open(path));
  return std::unique_ptr<RandomAccessSource>(std::move(file));
}

absl::StatusOr<PathKind> StatPath(const std::string& path) {
  if (IsRemotePath(path)) {
    ASSIGN_OR_RETURN(remote::RemoteKind k, remote::StatRemote(path));
    switch (k) {
      case remote::RemoteKind::kObject:
        return PathKind::kFile;
      case remote::RemoteKind::kFolder:
        return PathKind::kFolder;
      case remote::RemoteKind::kMissing:
        break;
    }
    return PathKind::kMissing;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return PathKind::kMissing;
    return IoError("cannot stat", path, errno);
  }
  return S_ISDIR(st.st_mode) ? PathKind::kFolder : PathKind::kFile;
}

}  // namespace shardfeed
