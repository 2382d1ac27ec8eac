// Paths of any kind: local files and remote objects (s3://, gs://,
// http(s)://, record/remote/) as peers. Callers open sources, read small
// files, look at and list folders without knowing where bytes come from.
//
// Local paths keep their POSIX meaning; for remote ones see
// record/remote/remote_files.h. Errors are absl::Status naming the path
// (remote paths are shown without query strings or credentials).
// Thread-safe.
#ifndef SHARDFEED_RECORD_STORAGE_H_
#define SHARDFEED_RECORD_STORAGE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/source.h"

namespace shardfeed {

// s3://, gs://, http:// or https://.
bool IsRemotePath(absl::string_view path);

// A local file (record/file.h) or a remote object, for reading at offsets.
absl::StatusOr<std::unique_ptr<RandomAccessSource>> OpenSource(const std::string& path);

enum class PathKind { kMissing, kFile, kFolder };
// What is at `path`. Errors (no permission, network) are returned, never
// taken for a missing path.
absl::StatusOr<PathKind> StatPath(const std::string& path);

}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_STORAGE_H_
