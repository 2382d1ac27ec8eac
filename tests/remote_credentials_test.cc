// Credentials from the ECS/EKS container endpoint (a fake endpoint on
// loopback answering as AWS does, with a session token and an expiry),
// refreshed before they expire; gs:// through the XML API with HMAC keys
// (GCS_ACCESS_KEY_ID/GCS_SECRET_ACCESS_KEY) against SeaweedFS; anonymous
// reads are not signed (and a bucket that needs keys refuses them).
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "reader/dataset.h"
#include "record/remote/aws_config.h"
#include "record/remote/credential_provider.h"
#include "record/remote/object_store.h"
#include "record/remote/remote_files.h"
#include "record/test_util.h"
#include "tests/fake_http_server.h"
#include "tests/remote_test_util.h"

namespace shardfeed {
namespace {

// The ECS/EKS container endpoint: every GET is answered with `body` (JSON)
// when the Authorization header is `token`, 401 otherwise.
class FakeCredentialEndpoint {
 public:
  FakeCredentialEndpoint(std::string token, std::string body)
      : server_([token = std::move(token), body = std::move(body)](
                    const testing::FakeRequest& r) -> testing::FakeAnswer {
          if (r.Header("authorization") != token) return {401, "{\"message\":\"denied\"}"};
          return {200, body, "application/json"};
        }) {}
  std::string url() const { return server_.endpoint() + "/creds"; }
  int requests() const { return server_.requests(); }

 private:
  testing::FakeHttpServer server_;
};

// SeaweedFS checks a session token against the tokens its own STS issued,
// so the container answer sent to it carries none (`with_token` false); the
// token itself is tested below against rclone, and SeaweedFS's refusal of a
// token it did not issue shows that the token is sent.
std::string CredentialsJson(absl::Time expiration, bool with_token = true) {
  return absl::StrCat("{\"AccessKeyId\":\"", testing::kTestAccessKey,
                      "\",\"SecretAccessKey\":\"", testing::kTestSecretKey, "\",",
                      with_token ? "\"Token\":\"session-token-123\"," : "",
                      "\"Expiration\":\"",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", expiration, absl::UTCTimeZone()),
                      "\"}");
}

class RemoteCredentialsTest : public testing::SeaweedSuite {
 protected:
  void TearDown() override {
    unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
    unsetenv("GCS_ACCESS_KEY_ID");
    unsetenv("GCS_SECRET_ACCESS_KEY");
    unsetenv("SHARDFEED_GCS_ENDPOINT_URL");
    remote::SetAnonymousAccess(false);
    remote::ForgetStores();
  }
};

TEST_F(RemoteCredentialsTest, ContainerEndpointWithSessionToken) {
  FakeCredentialEndpoint fake("Bearer ecs-auth",
                              CredentialsJson(absl::Now() + absl::Hours(6), /*with_token=*/false));
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  setenv("HOME", testing::MakeTempDir().c_str(), 1);  // no ~/.aws
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", fake.url().c_str(), 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer ecs-auth", 1);
  remote::ForgetStores();
  auto ds = Dataset::Open({"s3://data/ds/"});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(fake.requests(), 1);  // fetched once, cached while valid
  // A wrong authorization token: the endpoint refuses, and the error says
  // where the credentials were looked for.
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer wrong", 1);
  remote::ForgetStores();
  auto denied = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(absl::IsUnauthenticated(denied.status())) << denied.status();
  EXPECT_NE(denied.status().message().find("container"), std::string::npos);
}

TEST_F(RemoteCredentialsTest, TemporaryCredentialsAreRenewedBeforeTheyExpire) {
  // Keys expiring in 2 minutes are inside the 5-minute renewal window: every
  // use fetches fresh ones, so none is ever used about to expire.
  FakeCredentialEndpoint fake("t", CredentialsJson(absl::Now() + absl::Minutes(2)));
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", fake.url().c_str(), 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "t", 1);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  setenv("HOME", testing::MakeTempDir().c_str(), 1);
  remote::CredentialProvider provider(false, false, remote::LoadAwsProfile());
  for (int i = 0; i < 3; ++i) {
    auto c = provider.Get();
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c->value().session_token, "session-token-123");
    EXPECT_EQ(c->value().source, "container");
  }
  EXPECT_EQ(fake.requests(), 3);
  provider.set_refresh_before(absl::Seconds(10));  // now the last ones are good: cached
  ASSERT_TRUE(provider.Get().ok());
  ASSERT_TRUE(provider.Get().ok());
  EXPECT_EQ(fake.requests(), 3);
}

TEST_F(RemoteCredentialsTest, SessionTokensAreSentAndSigned) {
  // SeaweedFS did not issue this token: it refuses the request, which it
  // could not do had the header not been sent.
  setenv("AWS_SESSION_TOKEN", "session-token-123", 1);
  remote::ForgetStores();
  auto refused = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  // rclone verifies the signature over every signed header, token
  // included, and does not check tokens: the signed request is accepted.
  const std::string rclone = testing::FindBinary("SHARDFEED_RCLONE", "rclone");
  if (rclone.empty()) {
    if (testing::ServersRequired()) FAIL() << "rclone (SHARDFEED_RCLONE) is required in CI";
    GTEST_SKIP() << "no rclone binary";
  }
  const std::string dir = testing::MakeTempDir();
  for (const std::string& d : {dir + "/b", dir + "/b/data", dir + "/b/data/ds"}) {
    ::mkdir(d.c_str(), 0755);
  }
  testing::WriteRemoteTestDataset(dir + "/b/data/ds", 4, false);
  auto server =
      testing::StartRcloneS3(rclone, dir + "/b", testing::kTestAccessKey, testing::kTestSecretKey);
  ASSERT_TRUE(server.ok()) << server.status();
  setenv("AWS_ENDPOINT_URL", server->endpoint.c_str(), 1);
  remote::ForgetStores();
  auto ds = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(ds.ok()) << ds.status();
  unsetenv("AWS_SESSION_TOKEN");
}

TEST_F(RemoteCredentialsTest, GcsHmacKeysThroughTheXmlApi) {
  setenv("SHARDFEED_GCS_ENDPOINT_URL", endpoint().c_str(), 1);
  setenv("GCS_ACCESS_KEY_ID", testing::kTestAccessKey, 1);
  setenv("GCS_SECRET_ACCESS_KEY", testing::kTestSecretKey, 1);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  remote::ForgetStores();
  const LoaderOptions o = testing::EveryLoaderPath()[0];
  auto local = testing::ReadBatchBytes({local_dir()}, o);
  ASSERT_TRUE(local.ok()) << local.status();
  auto gcs = testing::ReadBatchBytes({"gs://data/ds/"}, o);
  ASSERT_TRUE(gcs.ok()) << gcs.status();
  EXPECT_TRUE(*local == *gcs);
}

TEST_F(RemoteCredentialsTest, AnonymousReadsAreNotSigned) {
  remote::SetAnonymousAccess(true);
  remote::ForgetStores();
  auto ds = Dataset::Open({"s3://data/ds/"});
  ASSERT_FALSE(ds.ok());  // this bucket is private
  EXPECT_TRUE(absl::IsPermissionDenied(ds.status())) << ds.status();
}

}  // namespace
}  // namespace shardfeed
