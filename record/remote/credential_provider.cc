#include "record/remote/credential_provider.h"

#include <cstdlib>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "record/path_util.h"
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
    absl::StatusOr<std::string> text = ReadLocalFile(token_file);
    if (!text.ok()) {
      return absl::UnauthenticatedError(absl::StrCat(
          "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: ", text.status().message()));
    }
    token = std::string(absl::StripAsciiWhitespace(*text));
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

bool EnvTrue(const char* name) { return absl::AsciiStrToLower(GetEnv(name)) == "true"; }

// IMDSv2 first, as the AWS SDKs: a PUT for a session token, then the GETs
// carry it. A PUT answered 403, 404 or 405 (a proxy or an old endpoint that
// refuses the method) falls back to IMDSv1 (GETs without a token), unless
// AWS_EC2_METADATA_V1_DISABLED=true (or the profile's
// ec2_metadata_v1_disabled = true). No answer at all: not on EC2.
absl::StatusOr<std::optional<AwsCredentials>> FromInstanceMetadata(const AwsProfile& profile) {
  if (EnvTrue("AWS_EC2_METADATA_DISABLED")) return std::optional<AwsCredentials>();
  std::string base = GetEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (base.empty()) base = profile.Get("ec2_metadata_service_endpoint");
  if (base.empty()) {
    const std::string mode = GetEnv("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
    base = absl::AsciiStrToLower(mode) == "ipv6" ? "http://[fd00:ec2::254]"
                                                 : "http://169.254.169.254";
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  HttpRequest put = MetadataRequest(base + "/latest/api/token");
  put.method = "PUT";
  put.headers.push_back("X-aws-ec2-metadata-token-ttl-seconds: 21600");
  absl::StatusOr<HttpResponse> token = HttpClient::Get().Perform(std::move(put), {403, 404, 405});
  if (!token.ok()) return std::optional<AwsCredentials>();  // not on EC2
  std::string header;
  if (token->status == 200) {
    header = "X-aws-ec2-metadata-token: " + token->body;
  } else if (EnvTrue("AWS_EC2_METADATA_V1_DISABLED") ||
             absl::AsciiStrToLower(profile.Get("ec2_metadata_v1_disabled")) == "true") {
    return absl::UnauthenticatedError(absl::StrCat(
        "instance metadata refused an IMDSv2 session token (HTTP ", token->status,
        ") and IMDSv1 is disabled (AWS_EC2_METADATA_V1_DISABLED / ec2_metadata_v1_disabled)"));
  }
  auto get = [&header](const std::string& url) {
    HttpRequest r = MetadataRequest(url);
    if (!header.empty()) r.headers.push_back(header);
    return HttpClient::Get().Perform(std::move(r));
  };
  const std::string roles_url = base + "/latest/meta-data/iam/security-credentials/";
  absl::StatusOr<HttpResponse> roles = get(roles_url);
  if (!roles.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat("instance metadata has no IAM role: ", roles.status().message()));
  }
  std::string role(absl::StripAsciiWhitespace(roles->body));
  role = role.substr(0, role.find('\n'));
  absl::StatusOr<HttpResponse> creds = get(roles_url + role);
  if (!creds.ok()) {
    return absl::UnauthenticatedError(absl::StrCat("instance metadata credentials of role '",
                                                   role, "': ", creds.status().message()));
  }
  ASSIGN_OR_RETURN(AwsCredentials c, ParseCredentialsJson(creds->body, "instance metadata"));
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
  ASSIGN_OR_RETURN(c, FromInstanceMetadata(profile_));
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
