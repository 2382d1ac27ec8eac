#include "record/remote/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "record/remote/url.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace remote {
namespace {

constexpr long kStallBytesPerSecond = 1024;
constexpr size_t kMaxErrorBody = 4096;

double EnvDouble(const char* name, double fallback) {
  const char* v = std::getenv(name);
  double d;
  return v != nullptr && absl::SimpleAtod(v, &d) && d > 0 ? d : fallback;
}

// An S3-style <Code>...</Code> from an error body, or "".
std::string ErrorCode(absl::string_view body) {
  const size_t a = body.find("<Code>");
  if (a == absl::string_view::npos) return "";
  const size_t b = body.find("</Code>", a);
  if (b == absl::string_view::npos) return "";
  return std::string(body.substr(a + 6, std::min<size_t>(b - a - 6, 80)));
}

bool IsRetryableCurlCode(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

// "bytes START-END/TOTAL" -> START (false if malformed).
bool ParseContentRangeStart(const std::string& v, uint64_t* start) {
  absl::string_view s = v;
  if (!absl::ConsumePrefix(&s, "bytes ")) return false;
  const size_t dash = s.find('-');
  return dash != absl::string_view::npos && absl::SimpleAtoi(s.substr(0, dash), start);
}

}  // namespace

HttpOptions HttpOptions::FromEnvironment() {
  HttpOptions o;
  if (const char* v = std::getenv("SHARDFEED_TLS_INSECURE"); v != nullptr && v[0] == '1') {
    o.tls_verify = false;
  }
  for (const char* name : {"AWS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
      o.ca_bundle = v;
      o.ca_bundle_variable = name;
      break;
    }
  }
  o.max_attempts = static_cast<int>(EnvDouble("SHARDFEED_HTTP_ATTEMPTS", o.max_attempts));
  o.stall_seconds = EnvDouble("SHARDFEED_HTTP_STALL_SECONDS", o.stall_seconds);
  o.connect_timeout = EnvDouble("SHARDFEED_HTTP_CONNECT_SECONDS", o.connect_timeout);
  return o;
}

std::string HttpResponse::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

bool IsRetryableHttpStatus(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

absl::Status HttpStatusError(long status, const std::string& url, absl::string_view body,
                             int attempts) {
  const std::string code = ErrorCode(body);
  const std::string what =
      absl::StrCat(RedactUrl(url), ": HTTP ", status, code.empty() ? "" : " ", code);
  if (status == 404) return absl::NotFoundError(absl::StrCat(what, ": not found"));
  if (status == 401 || status == 403) {
    std::string hint;
    if (code == "SignatureDoesNotMatch") {
      hint = ": the secret key does not match the access key (check AWS_SECRET_ACCESS_KEY or "
             "the profile's aws_secret_access_key)";
    } else if (code == "InvalidAccessKeyId") {
      hint = ": the access key is unknown to the server";
    } else if (code == "ExpiredToken") {
      hint = ": the session token expired";
    } else {
      hint = ": access denied (credentials, or --no-sign for a public bucket)";
    }
    return absl::PermissionDeniedError(absl::StrCat(what, hint));
  }
  if (status == 412) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": the object changed since it was opened (its ETag no longer matches): it was "
              "replaced in the bucket; restart to read the new version"));
  }
  if (status == 416) return absl::OutOfRangeError(absl::StrCat(what, ": range not satisfiable"));
  if (status >= 500 || status == 429 || status == 408) {
    return absl::UnavailableError(
        absl::StrCat(what, " after ", attempts, attempts == 1 ? " attempt" : " attempts"));
  }
  return absl::InvalidArgumentError(absl::StrCat(what, ": request refused"));
}

// Connection cache, DNS and TLS sessions shared by every thread's handle.
struct HttpClient::Shared {
  CURLSH* share = nullptr;
  std::mutex locks[CURL_LOCK_DATA_LAST];
  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<Shared*>(self)->locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<Shared*>(self)->locks[data].unlock();
  }
};

namespace {
thread_local double last_first_byte_seconds = 0;
}  // namespace

double HttpClient::LastFirstByteSeconds() { return last_first_byte_seconds; }

// One attempt's state, seen by curl's callbacks.
struct HttpClient::Transfer {
  CURL* easy = nullptr;
  HttpResponse* response = nullptr;
  // Range reads: the bytes go to dst[0, cap), starting at object offset
  // `want`; else to response->body.
  char* dst = nullptr;
  size_t cap = 0, got = 0;
  uint64_t want = 0;
  bool ranged = false;
  bool checked = false;  // status and Content-Range looked at
  bool error_answer = false;
  uint64_t skip = 0;  // leading bytes to drop (a 200 with the whole object)
  absl::Status bad;   // a wrong Content-Range
  HttpCounters* counters = nullptr;

  static size_t OnHeader(char* p, size_t size, size_t n, void* self) {
    auto* t = static_cast<Transfer*>(self);
    absl::string_view line(p, size * n);
    if (absl::StartsWith(line, "HTTP/")) {
      t->response->headers.clear();  // a new answer (after 100 Continue or a redirect)
      return size * n;
    }
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos) {
      std::string name = absl::AsciiStrToLower(line.substr(0, colon));
      t->response->headers[name] =
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    }
    return size * n;
  }

  bool Check() {
    checked = true;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response->status);
    error_answer = response->status >= 300;
    if (error_answer || !ranged) return true;
    const std::string range = response->Header("content-range");
    uint64_t start = 0;
    if (!range.empty()) {
      if (!ParseContentRangeStart(range, &start) || start != want) {
        bad = absl::DataLossError(absl::StrCat("the server sent range '", range,
                                               "' when bytes from ", want, " were asked for"));
        return false;
      }
    } else if (response->status == 200) {
      skip = want;  // Range ignored: the whole object
    } else {
      bad = absl::DataLossError(absl::StrCat("HTTP ", response->status,
                                             " without a Content-Range for a range request"));
      return false;
    }
    return true;
  }

  static size_t OnBody(char* p, size_t size, size_t n, void* self) {
    auto* t = static_cast<Transfer*>(self);
    size_t len = size * n;
    if (!t->checked && !t->Check()) return 0;
    t->counters->bytes.fetch_add(static_cast<int64_t>(len), std::memory_order_relaxed);
    if (t->error_answer || !t->ranged) {
      std::string& body = t->response->body;
      if (!t->error_answer || body.size() < kMaxErrorBody) body.append(p, len);
      return size * n;
    }
    if (t->skip > 0) {
      const size_t drop = static_cast<size_t>(std::min<uint64_t>(t->skip, len));
      t->skip -= drop;
      p += drop;
      len -= drop;
    }
    const size_t take = std::min(len, t->cap - t->got);
    std::memcpy(t->dst + t->got, p, take);
    t->got += take;
    if (take < len) return 0;  // more than asked: stop (got == cap)
    return size * n;
  }
};

HttpClient& HttpClient::Get() {
  static HttpClient* client = new HttpClient(HttpOptions::FromEnvironment());
  return *client;
}

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)), shared_(new Shared) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  shared_->share = curl_share_init();
  curl_share_setopt(shared_->share, CURLSHOPT_LOCKFUNC, &Shared::Lock);
  curl_share_setopt(shared_->share, CURLSHOPT_UNLOCKFUNC, &Shared::Unlock);
  curl_share_setopt(shared_->share, CURLSHOPT_USERDATA, shared_);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(shared_->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  set_options(options_);
}

void HttpClient::set_options(const HttpOptions& o) {
  options_ = o;
  if (!options_.tls_verify) {
    std::fprintf(stderr,
                 "shardfeed: WARNING: TLS certificate verification is OFF "
                 "(SHARDFEED_TLS_INSECURE=1): remote data is not authenticated\n");
  }
}

HttpClient::~HttpClient() {
  curl_share_cleanup(shared_->share);
  delete shared_;
}

void HttpClient::Backoff(int attempt) const {
  thread_local std::mt19937_64 rng(std::random_device{}());
  const double ceiling =
      std::min(options_.backoff_cap, options_.backoff_base * static_cast<double>(1u << std::min(attempt, 20)));
  std::uniform_real_distribution<double> jitter(0, ceiling);
  std::this_thread::sleep_for(std::chrono::duration<double>(jitter(rng)));
}

absl::Status HttpClient::Attempt(HttpRequest* r, Transfer* t) {
  // One easy handle per thread, reset per request; connections live in the
  // share handle.
  struct EasyHandle {
    CURL* h = curl_easy_init();
    ~EasyHandle() { curl_easy_cleanup(h); }
  };
  thread_local EasyHandle handle;
  CURL* e = handle.h;
  if (e == nullptr) return absl::ResourceExhaustedError("curl_easy_init failed");
  curl_easy_reset(e);
  t->easy = e;
  counters_.requests.fetch_add(1, std::memory_order_relaxed);
  if (r->authorize) RETURN_IF_ERROR(r->authorize(r));
  curl_easy_setopt(e, CURLOPT_SHARE, shared_->share);
  curl_easy_setopt(e, CURLOPT_URL, r->url.c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(1000 * (r->connect_timeout > 0 ? r->connect_timeout
                                                                    : options_.connect_timeout)));
  if (r->total_timeout > 0) {
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(1000 * r->total_timeout));
  }
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, kStallBytesPerSecond);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   std::max(1L, static_cast<long>(options_.stall_seconds)));
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, options_.tls_verify ? 1L : 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, options_.tls_verify ? 2L : 0L);
  if (!options_.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_bundle.c_str());
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  if (r->method == "HEAD") {
    curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
  } else if (r->method == "PUT" || r->method == "POST") {
    if (r->method == "POST") curl_easy_setopt(e, CURLOPT_POST, 1L);
    else curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r->body.size()));
  } else if (r->method != "GET") {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, r->method.c_str());
  }
  curl_slist* headers = nullptr;
  for (const std::string& h : r->headers) headers = curl_slist_append(headers, h.c_str());
  for (const std::string& h : r->auth_headers) headers = curl_slist_append(headers, h.c_str());
  // POSTFIELDS would add a form Content-Type. (No "Expect:" to turn off
  // 100-continue: curl 7.88's SigV4 signs that empty header, which it then
  // does not send, and strict servers refuse the signature.)
  if (r->method == "PUT" || r->method == "POST") {
    headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  }
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  if (!r->sign.provider.empty()) {
    curl_easy_setopt(e, CURLOPT_AWS_SIGV4, r->sign.provider.c_str());
    curl_easy_setopt(e, CURLOPT_USERNAME, r->sign.access_key.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, r->sign.secret_key.c_str());
  }
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  const CURLcode rc = curl_easy_perform(e);
  curl_slist_free_all(headers);
  curl_off_t first_byte_us = 0;
  if (curl_easy_getinfo(e, CURLINFO_STARTTRANSFER_TIME_T, &first_byte_us) == CURLE_OK) {
    last_first_byte_seconds = static_cast<double>(first_byte_us) * 1e-6;
  }
  if (!t->checked && rc == CURLE_OK) t->Check();  // an answer without a body
  // Forget the keys and the share: the thread's handle outlives the request
  // (and this client).
  curl_easy_setopt(e, CURLOPT_USERNAME, "");
  curl_easy_setopt(e, CURLOPT_PASSWORD, "");
  curl_easy_setopt(e, CURLOPT_SHARE, nullptr);
  if (!t->bad.ok()) return absl::DataLossError(absl::StrCat(RedactUrl(r->url), ": ", t->bad.message()));
  if (rc == CURLE_WRITE_ERROR && t->ranged && t->got == t->cap) return absl::OkStatus();
  if (rc != CURLE_OK) {
    const std::string what =
        absl::StrCat(RedactUrl(r->url), ": ", error[0] ? error : curl_easy_strerror(rc));
    if (rc == CURLE_SSL_CACERT_BADFILE) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, options_.ca_bundle.empty()
                    ? " (the system's CA bundle cannot be read)"
                    : absl::StrCat(" (the CA bundle ", options_.ca_bundle, " given by ",
                                   options_.ca_bundle_variable, " cannot be read)")));
    }
    if (rc == CURLE_PEER_FAILED_VERIFICATION) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, " (TLS verification failed: ",
          options_.ca_bundle.empty()
              ? "the system's CAs do not vouch for the server's certificate"
              : absl::StrCat("the CAs in ", options_.ca_bundle, " (", options_.ca_bundle_variable,
                             ") do not vouch for it"),
          "; give a private CA with AWS_CA_BUNDLE, or, knowingly, SHARDFEED_TLS_INSECURE=1)"));
    }
    return IsRetryableCurlCode(rc) ? absl::UnavailableError(what)
                                   : absl::InvalidArgumentError(what);
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpResponse> HttpClient::Perform(HttpRequest request,
                                                 const std::vector<long>& accept_status) {
  const int attempts = request.retry ? std::max(1, options_.max_attempts) : 1;
  absl::Status last;
  for (int a = 0; a < attempts; ++a) {
    if (a > 0) {
      counters_.retries.fetch_add(1, std::memory_order_relaxed);
      Backoff(a);
    }
    HttpResponse response;
    Transfer t;
    t.response = &response;
    t.counters = &counters_;
    last = Attempt(&request, &t);
    response.attempts = a + 1;
    if (!last.ok()) {
      if (absl::IsUnavailable(last)) continue;
      return last;
    }
    const long s = response.status;
    if (s < 300 || std::find(accept_status.begin(), accept_status.end(), s) != accept_status.end()) {
      return response;
    }
    last = HttpStatusError(s, request.url, response.body, a + 1);
    if (!IsRetryableHttpStatus(s)) return last;
    if (a + 1 == attempts) return last;  // says how many attempts
  }
  if (absl::IsUnavailable(last) && attempts > 1) {
    return absl::UnavailableError(absl::StrCat(last.message(), " (gave up after ", attempts,
                                               " attempts)"));
  }
  return last;
}

absl::StatusOr<size_t> HttpClient::ReadRange(HttpRequest request, uint64_t offset, size_t n,
                                             char* dst) {
  if (n == 0) return 0;
  const int attempts = request.retry ? std::max(1, options_.max_attempts) : 1;
  const std::vector<std::string> base_headers = request.headers;
  size_t got = 0;
  int failures = 0;
  absl::Status last;
  while (got < n) {
    if (failures >= attempts) {
      return absl::UnavailableError(absl::StrCat(last.message(), " (gave up after ", failures,
                                                 " attempts, ", got, " of ", n,
                                                 " bytes received)"));
    }
    if (failures > 0) {
      counters_.retries.fetch_add(1, std::memory_order_relaxed);
      Backoff(failures);
    }
    request.headers = base_headers;
    const uint64_t start = offset + got;
    request.headers.push_back(absl::StrCat("Range: bytes=", start, "-", offset + n - 1));
    HttpResponse response;
    Transfer t;
    t.response = &response;
    t.counters = &counters_;
    t.ranged = true;
    t.want = start;
    t.dst = dst + got;
    t.cap = n - got;
    last = Attempt(&request, &t);
    got += t.got;  // whatever arrived counts, even from a failed attempt
    if (!last.ok()) {
      if (!absl::IsUnavailable(last)) return last;
      ++failures;
      continue;
    }
    const long s = response.status;
    if (s == 416) return got;  // past the end
    if (s >= 300) {
      last = HttpStatusError(s, request.url, response.body, failures + 1);
      if (!IsRetryableHttpStatus(s)) return last;
      ++failures;
      continue;
    }
    if (t.got < t.cap) {
      // A complete answer shorter than asked: the object ends here (the
      // server said so with Content-Range's total or a plain 200).
      return got;
    }
  }
  return got;
}

}  // namespace remote
}  // namespace shardfeed
