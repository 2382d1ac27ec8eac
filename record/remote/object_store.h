// ObjectStore: the requests a dataset needs from S3-compatible stores
// (s3://, gs:// through GCS's XML API) and plain HTTP(S) servers: HEAD,
// ranged GET with If-Match, ListObjectsV2 with continuation, PUT.
//
// One store per scheme per process (For()), holding the endpoint, region
// and credential provider (record/remote/aws_config.h,
// credential_provider.h). Requests are signed by curl's SigV4 signer with
// "aws:amz:REGION:s3"; the canonical pieces curl 7.88 leaves to the caller
// are done here: each key segment percent-encoded, the query sorted and
// encoded, x-amz-content-sha256 (OpenSSL's SHA-256 of the payload) and
// x-amz-security-token sent. Custom endpoints use path-style URLs, AWS
// itself virtual-hosted ones. Errors: record/remote/http_client.h.
// Thread-safe.
#ifndef SHARDFEED_RECORD_REMOTE_OBJECT_STORE_H_
#define SHARDFEED_RECORD_REMOTE_OBJECT_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "record/remote/aws_config.h"
#include "record/remote/credential_provider.h"
#include "record/remote/http_client.h"
#include "record/remote/list_xml.h"
#include "record/remote/url.h"

namespace shardfeed {
namespace remote {

// Read without signing (--no-sign, anonymous=True; or SHARDFEED_NO_SIGN=1).
// Applies to stores made after the call.
void SetAnonymous(bool anonymous);
bool Anonymous();

// Drops the stores made so far: the next request reads the environment
// and ~/.aws again (after AWS_* variables change: tests, Python's
// configure()). Sources already open keep their store.
void ForgetStores();

class ObjectStore {
 public:
  static absl::StatusOr<std::shared_ptr<ObjectStore>> For(const RemotePath& p);
  // A store for `scheme` with explicit settings (tests).
  ObjectStore(Scheme scheme, Endpoint endpoint, std::shared_ptr<CredentialProvider> creds);

  // Size and ETag. NOT_FOUND when absent.
  absl::StatusOr<ObjectInfo> Head(const RemotePath& p);
  // Bytes [offset, offset + n) of the object, only while its ETag is still
  // `etag` (If-Match; "" = any version). Fewer than n only at its end.
  absl::StatusOr<size_t> ReadRange(const RemotePath& p, const std::string& etag,
                                   uint64_t offset, size_t n, char* dst);
  // The whole object (small files: manifests, indexes).
  absl::StatusOr<std::string> ReadAll(const RemotePath& p);
  // Objects under p.key (a prefix), every page; with `delimiter` only one
  // level ("folders" in ListPage::prefixes). UNIMPLEMENTED for http(s).
  absl::StatusOr<ListPage> List(const RemotePath& p, bool delimiter);
  // Uploads `data` as the object (one PUT).
  absl::Status Put(const RemotePath& p, absl::string_view data);
  // One signed request on the object with a query (CanonicalQuery's form,
  // e.g. "partNumber=1&uploadId=X") and a body: multipart uploads and
  // deletes (record/remote/upload.h). `retry` false: one attempt.
  absl::StatusOr<HttpResponse> Send(const std::string& method, const RemotePath& p,
                                    const std::string& query, absl::string_view body,
                                    bool retry = true);

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  // The request URL for an object (key encoded) with an optional query.
  std::string UrlFor(const RemotePath& p, const std::string& query) const;
  // A request with the signing hook (payload hash computed now).
  HttpRequest Request(const std::string& method, std::string url, absl::string_view body);

  const Scheme scheme_;
  const Endpoint endpoint_;
  const std::shared_ptr<CredentialProvider> creds_;
};

// Lower-case hex SHA-256 (OpenSSL).
std::string Sha256Hex(absl::string_view data);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_OBJECT_STORE_H_
