// CredentialProvider: the keys that sign requests to one kind of store,
// found as the AWS CLI finds them and refreshed before they expire.
//
// Order: static keys (environment, then the profile: record/remote/
// aws_config.h); the ECS/EKS container endpoint
// (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, with
// AWS_CONTAINER_AUTHORIZATION_TOKEN or _TOKEN_FILE); EC2 instance metadata
// (IMDSv2: a PUT for a session token, then the role's credentials; off with
// AWS_EC2_METADATA_DISABLED=true; AWS_EC2_METADATA_SERVICE_ENDPOINT or the
// profile's ec2_metadata_service_endpoint moves it,
// AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6 picks fd00:ec2::254; a token
// PUT answered 403/404/405 falls back to IMDSv1 as the AWS CLI does, unless
// AWS_EC2_METADATA_V1_DISABLED=true or ec2_metadata_v1_disabled). Anonymous
// providers (--no-sign, anonymous=True) sign nothing.
// Temporary credentials are fetched again `refresh_before` ahead of their
// expiry, so no request is signed with keys about to expire.
//
// Errors: UNAUTHENTICATED when no source has keys (saying where it looked
// and how to read a public bucket); secrets never appear in messages.
// Thread-safe.
#ifndef SHARDFEED_RECORD_REMOTE_CREDENTIAL_PROVIDER_H_
#define SHARDFEED_RECORD_REMOTE_CREDENTIAL_PROVIDER_H_

#include <memory>
#include <mutex>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "record/remote/aws_config.h"

namespace shardfeed {
namespace remote {

class CredentialProvider {
 public:
  CredentialProvider(bool gcs, bool anonymous, AwsProfile profile)
      : gcs_(gcs), anonymous_(anonymous), profile_(std::move(profile)) {}

  // nullopt: anonymous (do not sign).
  absl::StatusOr<std::optional<AwsCredentials>> Get();

  // Temporary credentials are renewed this long before they expire.
  // Default: 5 minutes.
  void set_refresh_before(absl::Duration d) { refresh_before_ = d; }
  bool anonymous() const { return anonymous_; }

 private:
  absl::StatusOr<AwsCredentials> Fetch();

  const bool gcs_, anonymous_;
  const AwsProfile profile_;
  absl::Duration refresh_before_ = absl::Minutes(5);
  std::mutex mu_;
  std::optional<AwsCredentials> cached_;  // guarded by mu_
};

// Parses the JSON the container endpoint and IMDS answer with
// (AccessKeyId, SecretAccessKey, Token, Expiration in RFC 3339).
absl::StatusOr<AwsCredentials> ParseCredentialsJson(absl::string_view json,
                                                    const std::string& source);

}  // namespace remote
}  // namespace shardfeed

#endif  // SHARDFEED_RECORD_REMOTE_CREDENTIAL_PROVIDER_H_
