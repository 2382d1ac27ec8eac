#include "record/remote/object_store.h"

#include <openssl/evp.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace remote {
namespace {

std::atomic<bool>& AnonymousFlag() {
  static std::atomic<bool> flag{[] {
    const char* v = std::getenv("SHARDFEED_NO_SIGN");
    return v != nullptr && v[0] == '1';
  }()};
  return flag;
}

struct StoreCache {
  std::mutex mu;
  std::map<std::pair<int, bool>, std::shared_ptr<ObjectStore>> stores;  // guarded by mu
};

StoreCache& Stores() {
  static StoreCache* cache = new StoreCache;
  return *cache;
}

// Errors name the path the user gave (s3://b/k) before the request's URL.
absl::Status Named(const absl::Status& s, const RemotePath& p) {
  if (s.ok() || p.scheme == Scheme::kHttp) return s;
  return absl::Status(s.code(), absl::StrCat(DisplayName(p), ": ", s.message()));
}

template <typename T>
absl::StatusOr<T> Named(absl::StatusOr<T> v, const RemotePath& p) {
  if (v.ok()) return v;
  return Named(v.status(), p);
}

}  // namespace

void ForgetStores() {
  StoreCache& c = Stores();
  std::lock_guard<std::mutex> lock(c.mu);
  c.stores.clear();
}

void SetAnonymous(bool anonymous) { AnonymousFlag() = anonymous; }
bool Anonymous() { return AnonymousFlag(); }

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<ObjectStore>> ObjectStore::For(const RemotePath& p) {
  StoreCache& c = Stores();
  const bool anonymous = Anonymous() || p.scheme == Scheme::kHttp;
  std::lock_guard<std::mutex> lock(c.mu);
  auto& store = c.stores[{static_cast<int>(p.scheme), anonymous}];
  if (store == nullptr) {
    const bool gcs = p.scheme == Scheme::kGcs;
    AwsProfile profile = LoadAwsProfile();
    Endpoint endpoint = ResolveEndpoint(gcs, profile);
    auto creds = std::make_shared<CredentialProvider>(gcs, anonymous, std::move(profile));
    store = std::make_shared<ObjectStore>(p.scheme, std::move(endpoint), std::move(creds));
  }
  return store;
}

ObjectStore::ObjectStore(Scheme scheme, Endpoint endpoint,
                         std::shared_ptr<CredentialProvider> creds)
    : scheme_(scheme), endpoint_(std::move(endpoint)), creds_(std::move(creds)) {}

std::string ObjectStore::UrlFor(const RemotePath& p, const std::string& query) const {
  std::string url;
  if (scheme_ == Scheme::kHttp) {
    url = p.url;
  } else {
    const std::string key = PercentEncode(p.key, /*keep_slash=*/true);
    if (!endpoint_.url.empty()) {
      url = absl::StrCat(endpoint_.url, "/", p.bucket, "/", key);
    } else if (p.bucket.find('.') != std::string::npos) {
      url = absl::StrCat("https://s3.", endpoint_.region, ".amazonaws.com/", p.bucket, "/", key);
    } else {
      url = absl::StrCat("https://", p.bucket, ".s3.", endpoint_.region, ".amazonaws.com/", key);
    }
  }
  if (!query.empty()) absl::StrAppend(&url, "?", query);
  return url;
}

HttpRequest ObjectStore::Request(const std::string& method, std::string url,
                                 absl::string_view body) {
  HttpRequest r;
  r.method = method;
  r.url = std::move(url);
  r.body = body;
  if (scheme_ == Scheme::kHttp) return r;
  const std::string payload_hash = Sha256Hex(body);
  std::shared_ptr<CredentialProvider> creds = creds_;
  const std::string provider = absl::StrCat("aws:amz:", endpoint_.region, ":s3");
  r.authorize = [creds, provider, payload_hash](HttpRequest* req) -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<AwsCredentials> c, creds->Get());
    req->auth_headers.clear();
    req->sign = SigV4();
    if (!c.has_value()) return absl::OkStatus();  // anonymous
    req->sign = {provider, c->access_key_id, c->secret_access_key};
    req->auth_headers.push_back("x-amz-content-sha256: " + payload_hash);
    if (!c->session_token.empty()) {
      req->auth_headers.push_back("x-amz-security-token: " + c->session_token);
    }
    return absl::OkStatus();
  };
  return r;
}

absl::StatusOr<ObjectInfo> ObjectStore::Head(const RemotePath& p) {
  absl::StatusOr<HttpResponse> head = HttpClient::Get().Perform(Request("HEAD", UrlFor(p, ""), ""));
  if (absl::IsPermissionDenied(head.status())) {
    // A HEAD answer has no body to say why: a one-byte GET does.
    char byte;
    absl::StatusOr<size_t> get = ReadRange(p, "", 0, 1, &byte);
    if (!get.ok()) return get.status();
  }
  ASSIGN_OR_RETURN(HttpResponse r, Named(std::move(head), p));
  ObjectInfo info;
  info.key = p.key;
  info.etag = r.Header("etag");
  const std::string length = r.Header("content-length");
  if (!absl::SimpleAtoi(length, &info.size)) {
    return absl::DataLossError(
        absl::StrCat(DisplayName(p), ": HEAD answered without a Content-Length"));
  }
  return info;
}

absl::StatusOr<size_t> ObjectStore::ReadRange(const RemotePath& p, const std::string& etag,
                                              uint64_t offset, size_t n, char* dst) {
  HttpRequest r = Request("GET", UrlFor(p, ""), "");
  if (!etag.empty()) r.headers.push_back("If-Match: " + etag);
  return Named(HttpClient::Get().ReadRange(std::move(r), offset, n, dst), p);
}

absl::StatusOr<std::string> ObjectStore::ReadAll(const RemotePath& p) {
  ASSIGN_OR_RETURN(HttpResponse r,
                   Named(HttpClient::Get().Perform(Request("GET", UrlFor(p, ""), "")), p));
  return std::move(r.body);
}

absl::StatusOr<ListPage> ObjectStore::List(const RemotePath& p, bool delimiter) {
  if (scheme_ == Scheme::kHttp) {
    return absl::UnimplementedError(absl::StrCat(
        DisplayName(p), ": an http(s) server cannot be listed: give the manifest.json or the "
                        "shards' URLs"));
  }
  RemotePath bucket = p;
  bucket.key.clear();
  ListPage all;
  std::string token;
  for (int page = 0;; ++page) {
    std::vector<std::pair<std::string, std::string>> q = {{"list-type", "2"}, {"prefix", p.key}};
    if (delimiter) q.push_back({"delimiter", "/"});
    if (!token.empty()) q.push_back({"continuation-token", token});
    const std::string url = UrlFor(bucket, CanonicalQuery(q));
    ASSIGN_OR_RETURN(HttpResponse r,
                     Named(HttpClient::Get().Perform(Request("GET", url, "")), p));
    ASSIGN_OR_RETURN(ListPage one, ParseListObjectsV2(r.body, DisplayName(p)));
    for (auto& o : one.objects) all.objects.push_back(std::move(o));
    for (auto& x : one.prefixes) all.prefixes.push_back(std::move(x));
    if (!one.truncated) break;
    if (one.next_token == token) {
      return absl::DataLossError(
          absl::StrCat(DisplayName(p), ": the listing repeats its continuation token"));
    }
    token = one.next_token;
  }
  return all;
}

absl::Status ObjectStore::Put(const RemotePath& p, absl::string_view data) {
  return Named(HttpClient::Get().Perform(Request("PUT", UrlFor(p, ""), data)).status(), p);
}

absl::StatusOr<HttpResponse> ObjectStore::Send(const std::string& method, const RemotePath& p,
                                               const std::string& query, absl::string_view body,
                                               bool retry) {
  HttpRequest r = Request(method, UrlFor(p, query), body);
  r.retry = retry;
  return Named(HttpClient::Get().Perform(std::move(r)), p);
}

}  // namespace remote
}  // namespace shardfeed
