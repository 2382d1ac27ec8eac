#include "record/remote/credential_provider.h"

#include <cstdlib>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "record/remote/http_client.h"
#include "record/status_macros.h"

namespace shardfeed {
namespace remote {
namespace {

std::string Field(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? std::string() : it->second.string_value();
}

// Metadata endpoints answer at once or not at all: one quick attempt.
HttpRequest MetadataRequest(const std::string& url) {
  HttpRequest r;
  r.url = url;
  r.retry = false;
  r.connect_timeout = 1;
  r.total_timeout = 3;
  return r;
}

absl::StatusOr<std::optional<AwsCredentials>> FromContainer() {
  std::string url = GetEnv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const std::string relative = GetEnv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  if (url.empty() && !relative.empty()) url = "http://169.254.170.2" + relative;
  if (url.empty()) return std::optional<AwsCredentials>();
  HttpRequest r = MetadataRequest(url);
  std::string token = GetEnv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  const std::string token_file = GetEnv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  if (!token_file.empty()) {
    token = std::string(absl::StripAsciiWhitespace(ReadSmallFile(token_file)));
  }
  if (!token.empty()) r.headers.push_back("Authorization: " + token);
  absl::StatusOr<HttpResponse> answer = HttpClient::Get().Perform(std::move(r));
  if (!answer.ok()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "container credentials endpoint failed: ", answer.status().message()));
  }
  ASSIGN_OR_RETURN(AwsCredentials c, ParseCredentialsJson(answer->body, "container"));
  return std::optional<AwsCredentials>(c);
}

absl::StatusOr<std::optional<AwsCredentials>> FromInstanceMetadata() {
  if (absl::AsciiStrToLower(GetEnv("AWS_EC2_METADATA_DISABLED")) == "true") {
    return std::optional<AwsCredentials>();
  }
  std::string base = GetEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (base.empty()) base = "http://169.254.169.254";
  while (!base.empty() && base.back() == '/') base.pop_back();
  HttpRequest put = MetadataRequest(base + "/latest/api/token");
  put.method = "PUT";
  put.headers.push_back("X-aws-ec2-metadata-token-ttl-seconds: 21600");
  absl::StatusOr<HttpResponse> token = HttpClient::Get().Perform(std::move(put));
  if (!token.ok()) return std::optional<AwsCredentials>();  // not on EC2
  const std::string header = "X-aws-ec2-metadata-token: " + token->body;
  const std::string roles_url = base + "/latest/meta-data/iam/security-credentials/";
  HttpRequest list = MetadataRequest(roles_url);
  list.headers.push_back(header);
  absl::StatusOr<HttpResponse> roles = HttpClient::Get().Perform(std::move(list));
  if (!roles.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("instance metadata has no IAM role: ", roles.status().message()));
  }
  std::string role(absl::StripAsciiWhitespace(roles->body));
  role = role.substr(0, role.find('\n'));
  HttpRequest get = MetadataRequest(roles_url + role);
  get.headers.push_back(header);
  ASSIGN_OR_RETURN(HttpResponse creds, HttpClient::Get().Perform(std::move(get)));
  ASSIGN_OR_RETURN(AwsCredentials c, ParseCredentialsJson(creds.body, "instance metadata"));
  return std::optional<AwsCredentials>(c);
}

}  // namespace

absl::StatusOr<AwsCredentials> ParseCredentialsJson(absl::string_view json,
                                                    const std::string& source) {
  google::protobuf::Struct s;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(std::string(json), &s, options).ok()) {
    return absl::UnauthenticatedError(absl::StrCat(source, ": credentials are not JSON"));
  }
  AwsCredentials c;
  c.access_key_id = Field(s, "AccessKeyId");
  c.secret_access_key = Field(s, "SecretAccessKey");
  c.session_token = Field(s, "Token");
  c.source = source;
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return absl::UnauthenticatedError(
        absl::StrCat(source, ": the answer has no AccessKeyId/SecretAccessKey"));
  }
  const std::string expiration = Field(s, "Expiration");
  if (!expiration.empty()) {
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, expiration, &c.expiration, &error)) {
      return absl::UnauthenticatedError(
          absl::StrCat(source, ": bad Expiration '", expiration, "': ", error));
    }
  }
  return c;
}

absl::StatusOr<AwsCredentials> CredentialProvider::Fetch() {
  ASSIGN_OR_RETURN(std::optional<AwsCredentials> c, StaticCredentials(gcs_, profile_));
  if (c.has_value()) return *c;
  ASSIGN_OR_RETURN(c, FromContainer());
  if (c.has_value()) return *c;
  ASSIGN_OR_RETURN(c, FromInstanceMetadata());
  if (c.has_value()) return *c;
  return absl::UnauthenticatedError(absl::StrCat(
      "no credentials for ", gcs_ ? "gs://" : "s3://",
      " (looked in ", gcs_ ? "GCS_ACCESS_KEY_ID/GCS_SECRET_ACCESS_KEY, " : "",
      "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profile '", profile_.name,
      "' in ~/.aws, the container endpoint and instance metadata); for a public bucket "
      "read anonymously (--no-sign, anonymous=True)"));
}

absl::StatusOr<std::optional<AwsCredentials>> CredentialProvider::Get() {
  if (anonymous_) return std::optional<AwsCredentials>();
  std::lock_guard<std::mutex> lock(mu_);
  if (!cached_.has_value() || cached_->expiration - refresh_before_ <= absl::Now()) {
    absl::StatusOr<AwsCredentials> fresh = Fetch();
    if (!fresh.ok()) {
      // Keys that have not expired yet are still good while the source is down.
      if (cached_.has_value() && cached_->expiration > absl::Now()) return cached_;
      return fresh.status();
    }
    cached_ = *std::move(fresh);
  }
  return cached_;
}

}  // namespace remote
}  // namespace shardfeed
