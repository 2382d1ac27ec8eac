// Remote paths: s3://BUCKET/KEY, gs://BUCKET/KEY and http(s)://HOST/PATH.
//
// Parsing, percent-encoding (RFC 3986 unreserved characters kept, each key
// segment encoded on its own, as SigV4's canonical URI wants) and the form
// of a URL that is safe to print (RedactUrl: a query string, which may hold
// a presigned signature or a token, is never shown). Pure functions.
#ifndef SHARDFEED_RECORD_REMOTE_URL_H_
#define SHARDFEED_RECORD_REMOTE_URL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {
namespace remote {

enum class Scheme { kS3, kGcs, kHttp };

struct RemotePath {
  Scheme scheme = Scheme::kS3;
  // s3/gs: the bucket and the key (no leading '/'; may be empty or end in
  // '/' for a prefix). http(s): the whole URL in `url`, bucket/key empty.
  std::string bucket, key;
  std::string url;
};

// True for "s3://", "gs://", "http://", "https://" (case-insensitive scheme).
bool IsRemotePath(absl::string_view path);

// INVALID_ARGUMENT for a malformed remote path (no bucket, bad characters).
absl::StatusOr<RemotePath> ParseRemotePath(absl::string_view path);

// Percent-encodes everything but A-Z a-z 0-9 - . _ ~ (and '/' when
// keep_slash), as SigV4 requires.
std::string PercentEncode(absl::string_view s, bool keep_slash);

// "k1=v1&k2=v2", keys sorted, keys and values percent-encoded (SigV4's
// canonical query string; curl 7.88 signs the query as given).
std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params);

// The URL with any query string replaced by "?<redacted>" (presigned URLs
// carry signatures and tokens there) and any user:password@ removed.
std::string RedactUrl(absl::string_view url);

// "scheme://bucket/key" (s3/gs) or the redacted URL (http).
std::string DisplayName(const RemotePath& p);

// The parent "folder" of a path ("s3://b/a/c" -> "s3://b/a"), and the
// joined path of a folder and a name.
std::string RemoteDirName(absl::string_view path);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_URL_H_
