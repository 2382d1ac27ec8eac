#include "record/remote/url.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shardfeed {
namespace remote {
namespace {

bool HasSchemePrefix(absl::string_view path, absl::string_view scheme) {
  return path.size() > scheme.size() &&
         absl::EqualsIgnoreCase(path.substr(0, scheme.size()), scheme);
}

}  // namespace

bool IsRemotePath(absl::string_view path) {
  return HasSchemePrefix(path, "s3://") || HasSchemePrefix(path, "gs://") ||
         HasSchemePrefix(path, "http://") || HasSchemePrefix(path, "https://");
}

absl::StatusOr<RemotePath> ParseRemotePath(absl::string_view path) {
  RemotePath p;
  if (HasSchemePrefix(path, "http://") || HasSchemePrefix(path, "https://")) {
    p.scheme = Scheme::kHttp;
    p.url = std::string(path);
    return p;
  }
  if (HasSchemePrefix(path, "s3://")) {
    p.scheme = Scheme::kS3;
  } else if (HasSchemePrefix(path, "gs://")) {
    p.scheme = Scheme::kGcs;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a remote path"));
  }
  absl::string_view rest = path.substr(5);
  const size_t slash = rest.find('/');
  p.bucket = std::string(rest.substr(0, slash));
  if (slash != absl::string_view::npos) p.key = std::string(rest.substr(slash + 1));
  if (p.bucket.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no bucket name"));
  }
  for (char c : p.bucket) {
    if (!(absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_')) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": '", std::string(1, c), "' cannot be in a bucket name"));
    }
  }
  return p;
}

std::string PercentEncode(absl::string_view s, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CanonicalQuery(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& kv : params) {
    kv.first = PercentEncode(kv.first, false);
    kv.second = PercentEncode(kv.second, false);
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& kv : params) {
    if (!out.empty()) out.push_back('&');
    absl::StrAppend(&out, kv.first, "=", kv.second);
  }
  return out;
}

std::string RedactUrl(absl::string_view url) {
  std::string out(url);
  const size_t q = out.find('?');
  if (q != std::string::npos) out = out.substr(0, q) + "?<redacted>";
  const size_t scheme_end = out.find("://");
  if (scheme_end != std::string::npos) {
    const size_t host_start = scheme_end + 3;
    const size_t host_end = out.find('/', host_start);
    const size_t at = out.find('@', host_start);
    if (at != std::string::npos && (host_end == std::string::npos || at < host_end)) {
      out.erase(host_start, at + 1 - host_start);
    }
  }
  return out;
}

std::string DisplayName(const RemotePath& p) {
  switch (p.scheme) {
    case Scheme::kS3:
      return absl::StrCat("s3://", p.bucket, "/", p.key);
    case Scheme::kGcs:
      return absl::StrCat("gs://", p.bucket, "/", p.key);
    case Scheme::kHttp:
      break;
  }
  return RedactUrl(p.url);
}

std::string RemoteDirName(absl::string_view path) {
  absl::string_view p = path;
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const size_t scheme_end = p.find("://");
  const size_t root = scheme_end == absl::string_view::npos ? 0 : scheme_end + 3;
  const size_t slash = p.rfind('/');
  if (slash == absl::string_view::npos || slash < root) return std::string(p);
  return std::string(p.substr(0, slash));
}

}  // namespace remote
}  // namespace shardfeed
