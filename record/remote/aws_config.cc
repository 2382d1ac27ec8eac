#include "record/remote/aws_config.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "record/path_util.h"

namespace shardfeed {
namespace remote {
namespace {

std::string HomePath(const char* env_override, const char* relative) {
  std::string p = GetEnv(env_override);
  if (!p.empty()) return p;
  const std::string home = GetEnv("HOME");
  return home.empty() ? std::string() : absl::StrCat(home, "/", relative);
}

std::map<std::string, std::string> Section(const std::string& path, const std::string& name) {
  if (path.empty()) return {};
  // An absent or unreadable file has no entries (as for the AWS CLI).
  IniFile ini = ParseIni(ReadLocalFile(path).value_or(""));
  auto it = ini.find(name);
  return it == ini.end() ? std::map<std::string, std::string>() : it->second;
}

}  // namespace

std::string GetEnv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

IniFile ParseIni(absl::string_view text) {
  IniFile out;
  std::string section;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(absl::StripAsciiWhitespace(line.substr(1, line.size() - 2)));
      out[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    std::string key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, eq)));
    out[section][key] = std::string(absl::StripAsciiWhitespace(line.substr(eq + 1)));
  }
  return out;
}

std::string AwsProfile::Get(const std::string& key) const {
  auto it = credentials.find(key);
  if (it != credentials.end()) return it->second;
  it = config.find(key);
  return it == config.end() ? std::string() : it->second;
}

AwsProfile LoadAwsProfile() {
  AwsProfile p;
  p.name = GetEnv("AWS_PROFILE");
  if (p.name.empty()) p.name = GetEnv("AWS_DEFAULT_PROFILE");
  if (p.name.empty()) p.name = "default";
  p.credentials = Section(HomePath("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"), p.name);
  const std::string config = HomePath("AWS_CONFIG_FILE", ".aws/config");
  p.config = Section(config, p.name == "default" ? "default" : "profile " + p.name);
  if (p.config.empty() && p.name != "default") p.config = Section(config, p.name);
  return p;
}

Endpoint ResolveEndpoint(bool gcs, const AwsProfile& profile) {
  Endpoint e;
  if (gcs) {
    e.url = GetEnv("SHARDFEED_GCS_ENDPOINT_URL");
    if (e.url.empty()) e.url = "https://storage.googleapis.com";
    e.url = StripTrailingSlashes(e.url);
    e.region = "auto";
    return e;
  }
  for (const char* name : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    e.url = GetEnv(name);
    if (!e.url.empty()) break;
  }
  if (e.url.empty()) e.url = profile.Get("endpoint_url");
  e.url = StripTrailingSlashes(e.url);
  for (const char* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
    e.region = GetEnv(name);
    if (!e.region.empty()) break;
  }
  if (e.region.empty()) e.region = profile.Get("region");
  if (e.region.empty()) e.region = "us-east-1";
  // AWS itself: virtual-hosted style; a custom endpoint: path style.
  e.path_style = !e.url.empty();
  return e;
}

absl::StatusOr<std::optional<AwsCredentials>> StaticCredentials(bool gcs,
                                                                const AwsProfile& profile) {
  std::vector<std::pair<const char*, const char*>> pairs;
  if (gcs) pairs.push_back({"GCS_ACCESS_KEY_ID", "GCS_SECRET_ACCESS_KEY"});
  pairs.push_back({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"});
  for (const auto& [id_name, secret_name] : pairs) {
    const std::string id = GetEnv(id_name), secret = GetEnv(secret_name);
    if (id.empty() && secret.empty()) continue;
    if (id.empty() || secret.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          id.empty() ? id_name : secret_name, " is not set but ",
          id.empty() ? secret_name : id_name, " is: set both"));
    }
    AwsCredentials c;
    c.access_key_id = id;
    c.secret_access_key = secret;
    if (absl::StartsWith(id_name, "AWS_")) c.session_token = GetEnv("AWS_SESSION_TOKEN");
    c.source = "environment";
    return std::optional<AwsCredentials>(c);
  }
  const std::string id = profile.Get("aws_access_key_id");
  const std::string secret = profile.Get("aws_secret_access_key");
  if (id.empty() && secret.empty()) return std::optional<AwsCredentials>();
  if (id.empty() || secret.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile '", profile.name, "' has ",
                     id.empty() ? "aws_secret_access_key but no aws_access_key_id"
                                : "aws_access_key_id but no aws_secret_access_key"));
  }
  AwsCredentials c;
  c.access_key_id = id;
  c.secret_access_key = secret;
  c.session_token = profile.Get("aws_session_token");
  c.source = absl::StrCat("profile ", profile.name);
  return std::optional<AwsCredentials>(c);
}

}  // namespace remote
}  // namespace shardfeed
