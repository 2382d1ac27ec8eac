// Remote paths as files: what record/storage.h calls for s3://, gs:// and
// http(s):// paths. A "folder" of an object store is a key prefix ending
// in '/'. Errors: record/remote/http_client.h; UNIMPLEMENTED for listing an
// http(s) server. Thread-safe.
#ifndef SHARDFEED_RECORD_REMOTE_REMOTE_FILES_H_
#define SHARDFEED_RECORD_REMOTE_REMOTE_FILES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "record/source.h"

namespace shardfeed {
namespace remote {

// Opens an object for reading: its size and ETag are taken now (HEAD), and
// every later read asks for that version (If-Match).
absl::StatusOr<std::unique_ptr<RandomAccessSource>> OpenObject(const std::string& path);

absl::StatusOr<std::string> ReadObject(const std::string& path);

enum class RemoteKind { kMissing, kObject, kFolder };
absl::StatusOr<RemoteKind> StatRemote(const std::string& path);

// One level of a folder: object names and sub-folder names, sorted.
struct RemoteEntries {
  std::vector<std::string> files, dirs;
};
absl::StatusOr<RemoteEntries> ListRemoteDir(const std::string& dir);

// Objects matching a shell glob (*, ?, [..]; '*' does not cross '/'),
// full paths, sorted; NOT_FOUND when none matches.
absl::StatusOr<std::vector<std::string>> GlobRemote(const std::string& pattern);

// Read without signing from now on (--no-sign, anonymous=True; also
// SHARDFEED_NO_SIGN=1): public buckets, no credentials looked up.
void SetAnonymousAccess(bool anonymous);

// Remote traffic of this process so far (every request, retries
// included; body bytes received): bench's requests and bytes per record.
struct RemoteTraffic {
  int64_t requests = 0, retries = 0, bytes = 0;
};
RemoteTraffic RemoteTrafficSoFar();

// Time to first byte of the calling thread's last request, seconds (0
// before any): a fetcher's latency measurement.
double LastFirstByteSeconds();

// Uploads `contents` as the object (it appears whole or not at all).
absl::Status WriteObject(const std::string& path, const std::string& contents);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_REMOTE_FILES_H_
