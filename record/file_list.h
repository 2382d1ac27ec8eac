// Directory listing and glob helpers: the converter's file-based sources,
// shard discovery (reader/shard_discovery.h) and check. Folders and globs
// may be remote (s3://bucket/prefix/, gs://...: record/remote/remote_files.h).
#ifndef SHARDFEED_RECORD_FILE_LIST_H_
#define SHARDFEED_RECORD_FILE_LIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace shardfeed {

struct DirEntries {
  std::vector<std::string> dirs;   // sorted names
  std::vector<std::string> files;  // sorted names (regular files)
};

// Lists `dir` (not recursive); hidden entries (".name") are left out.
absl::StatusOr<DirEntries> ListDir(const std::string& dir);

// Regular files below `dir`, recursively, as paths relative to `dir`, sorted.
absl::StatusOr<std::vector<std::string>> ListFilesRecursive(const std::string& dir);

// Paths matching a shell glob, sorted; NOT_FOUND when nothing matches.
absl::StatusOr<std::vector<std::string>> Glob(const std::string& pattern);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_FILE_LIST_H_
