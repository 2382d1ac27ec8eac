// HttpClient: HTTP(S) requests through libcurl, for remote datasets.
//
// One process-wide client (Get()): connections, DNS answers and TLS
// sessions are shared by every thread through a curl share handle, so
// requests to one endpoint reuse connections; each thread keeps its own
// easy handle. Requests are signed by curl's built-in AWS SigV4 signer when
// HttpRequest::sign is set (the caller adds x-amz-content-sha256 and the
// session token header itself, as curl 7.88 needs).
//
// Robustness: stalled transfers time out (a low-speed limit: below
// kStallBytesPerSecond for stall_seconds), connects time out, and 5xx, 429,
// 408, resets and timeouts are retried with exponential backoff and full
// jitter, up to max_attempts. A range read resumes from the last byte
// received, accepts 206 and 200 + Content-Range (and a plain 200 with the
// whole object, from servers that ignore Range), and verifies the range the
// server says it sent.
//
// Errors (absl::Status, messages name the redacted URL and the HTTP status,
// never credentials): NOT_FOUND (404), PERMISSION_DENIED (401/403, with the
// server's error code, e.g. SignatureDoesNotMatch), FAILED_PRECONDITION
// (412: the object changed, If-Match failed; TLS verification failures),
// OUT_OF_RANGE (416), UNAVAILABLE (5xx/429 or network failures that outlived
// the retries, with the attempt count). Thread-safe.
#ifndef SHARDFEED_RECORD_REMOTE_HTTP_CLIENT_H_
#define SHARDFEED_RECORD_REMOTE_HTTP_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shardfeed {
namespace remote {

struct HttpOptions {
  // Verify the server's TLS certificate. Turning it off prints a warning
  // once (SHARDFEED_TLS_INSECURE=1 in the environment). Default: true.
  bool tls_verify = true;
  // A CA bundle file (PEM) replacing the system's: the first set of
  // AWS_CA_BUNDLE (as the AWS CLI), CURL_CA_BUNDLE (as curl), SSL_CERT_FILE
  // (as OpenSSL and Python). Default: the system's.
  std::string ca_bundle;
  std::string ca_bundle_variable;  // the variable it came from, for messages
  // Attempts per request, first included (SHARDFEED_HTTP_ATTEMPTS). Default: 8.
  int max_attempts = 8;
  // A transfer slower than 1 KB/s for this long is abandoned and retried
  // (SHARDFEED_HTTP_STALL_SECONDS). Default: 20.
  double stall_seconds = 20;
  // Connect timeout, seconds. Default: 10.
  double connect_timeout = 10;
  // Backoff: the n-th retry waits a random time in [0, min(cap, base*2^n)].
  double backoff_base = 0.05, backoff_cap = 5;

  // The defaults with the environment's overrides.
  static HttpOptions FromEnvironment();
};

// SigV4 signing through CURLOPT_AWS_SIGV4.
struct SigV4 {
  std::string provider;  // "aws:amz:REGION:s3"
  std::string access_key, secret_key;
};

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  absl::string_view body;            // PUT/POST payload
  // Called before every attempt (credentials may be refreshed between
  // attempts): fills `sign` and the auth headers. May be empty.
  std::function<absl::Status(HttpRequest*)> authorize;
  std::vector<std::string> auth_headers;  // set by authorize, each attempt
  SigV4 sign;  // empty provider: not signed
  // Retry 5xx/429/resets (false: one attempt, e.g. metadata probes).
  bool retry = true;
  // Overrides of the client's timeouts (0: the client's).
  double connect_timeout = 0, total_timeout = 0;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  int attempts = 0;
  std::string Header(const std::string& name) const;
};

struct HttpCounters {
  std::atomic<int64_t> requests{0};   // HTTP requests sent (attempts)
  std::atomic<int64_t> retries{0};    // of which retries
  std::atomic<int64_t> bytes{0};      // body bytes received
};

class HttpClient {
 public:
  // The process's client (options from the environment at first use).
  static HttpClient& Get();
  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // A whole request; the body is kept. Statuses >= 300 are errors (see the
  // file comment) unless `accept_status` says otherwise.
  absl::StatusOr<HttpResponse> Perform(HttpRequest request,
                                       const std::vector<long>& accept_status = {});

  // Reads bytes [offset, offset + n) of `request.url` into dst (Range
  // requests, resumed from the last byte received). Returns the count:
  // fewer than n only at the object's end (416 or a short final body).
  absl::StatusOr<size_t> ReadRange(HttpRequest request, uint64_t offset, size_t n, char* dst);

  const HttpOptions& options() const { return options_; }
  // Not thread-safe: between transfers only (tests). Turning TLS
  // verification off prints the warning again.
  void set_options(const HttpOptions& o);
  HttpCounters& counters() { return counters_; }
  // Time to first byte of the calling thread's last request attempt, in
  // seconds (0 before any): what a fetcher measures latency with.
  static double LastFirstByteSeconds();

 private:
  struct Shared;
  struct Transfer;
  absl::Status Attempt(HttpRequest* request, Transfer* t);
  void Backoff(int attempt) const;

  HttpOptions options_;
  Shared* shared_;
  HttpCounters counters_;
};

// The status for an HTTP error answer (see the file comment); `body` may
// hold an S3 <Error><Code>.
absl::Status HttpStatusError(long status, const std::string& url, absl::string_view body,
                             int attempts);

// True for statuses worth retrying: 408, 429, 500, 502, 503, 504.
bool IsRetryableHttpStatus(long status);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_HTTP_CLIENT_H_
