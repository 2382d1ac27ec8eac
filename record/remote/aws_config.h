// Where an S3-compatible store is and which keys open it, resolved as the
// AWS CLI does, from the environment and the shared config files.
//
// Profile: AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default".
// Files: AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials) and
// AWS_CONFIG_FILE (default ~/.aws/config, sections "[profile NAME]" or
// "[default]"). Region: AWS_REGION, AWS_DEFAULT_REGION, the profile's
// `region`, else us-east-1. Endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL,
// the profile's `endpoint_url`, else AWS itself. For gs://: GCS's XML API
// (https://storage.googleapis.com, or SHARDFEED_GCS_ENDPOINT_URL) in region
// "auto". Pure functions of the environment and files; no network.
#ifndef SHARDFEED_RECORD_REMOTE_AWS_CONFIG_H_
#define SHARDFEED_RECORD_REMOTE_AWS_CONFIG_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shardfeed {
namespace remote {

struct AwsCredentials {
  std::string access_key_id, secret_access_key, session_token;
  absl::Time expiration = absl::InfiniteFuture();  // temporary credentials expire
  std::string source;  // "environment", "profile NAME", "container", "instance metadata"
};

// The variable's value, "" when unset.
std::string GetEnv(const char* name);

using IniFile = std::map<std::string, std::map<std::string, std::string>>;

// Sections and key = value lines; '#' and ';' start comments. Keys are
// lower-cased; values trimmed.
IniFile ParseIni(absl::string_view text);

struct AwsProfile {
  std::string name;
  std::map<std::string, std::string> credentials;  // from the credentials file
  std::map<std::string, std::string> config;       // from the config file
  std::string Get(const std::string& key) const;   // credentials first
};

// The active profile's entries (empty maps where files are absent).
AwsProfile LoadAwsProfile();

struct Endpoint {
  std::string url;     // "http://127.0.0.1:8333" (no trailing '/'), or "" for AWS
  std::string region;  // "us-east-1", "auto"
  bool path_style = true;
};

// Where s3:// (gcs = false) or gs:// (gcs = true) requests go.
Endpoint ResolveEndpoint(bool gcs, const AwsProfile& profile);

// Static keys from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN; for gcs GCS_ACCESS_KEY_ID/GCS_SECRET_ACCESS_KEY first)
// or the profile; nullopt when none is set. INVALID_ARGUMENT when only half
// a pair is set (named, never its value).
absl::StatusOr<std::optional<AwsCredentials>> StaticCredentials(bool gcs,
                                                                const AwsProfile& profile);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_AWS_CONFIG_H_
