// EC2 instance metadata credentials (IMDS) against a fake metadata service
// of ours on loopback that answers as EC2's does (IMDSv2 session tokens with
// a TTL, 401 for a GET without one, the role name, then temporary keys with
// an Expiration), found through AWS_EC2_METADATA_SERVICE_ENDPOINT: the keys
// read the test bucket from SeaweedFS; they are renewed before they expire,
// each time with a fresh session token; AWS_EC2_METADATA_DISABLED=true asks
// nothing; a service that refuses the token PUT (403/404/405) is read with
// IMDSv1 as the AWS CLI and SDKs do, unless AWS_EC2_METADATA_V1_DISABLED.
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "reader/dataset.h"
#include "record/remote/aws_config.h"
#include "record/remote/credential_provider.h"
#include "record/remote/http_client.h"
#include "record/remote/object_store.h"
#include "record/test_util.h"
#include "tests/fake_http_server.h"
#include "tests/remote_test_util.h"
#include "gtest/gtest.h"

namespace shardfeed {
namespace {

constexpr char kRole[] = "shardfeed-test-role";
constexpr char kCredentialsPath[] =
    "/latest/meta-data/iam/security-credentials/";

// EC2's metadata service. IMDSv2: PUT /latest/api/token with
// X-aws-ec2-metadata-token-ttl-seconds in [1, 21600] (else 400) issues a
// token that lives that long; a GET needs a live one in
// X-aws-ec2-metadata-token (401 without). `v1_only`: an endpoint that
// refuses the PUT (405) and answers GETs without a token. The keys expire
// `lifetime` after each answer. SeaweedFS accepts only session tokens its
// own STS issued, so the answer carries no Token (the container test checks
// that tokens are sent and signed).
class FakeImds {
public:
  FakeImds(bool v1_only, absl::Duration lifetime)
      : v1_only_(v1_only), lifetime_(lifetime),
        server_([this](const testing::FakeRequest &r) { return Answer(r); }) {}

  std::string endpoint() const { return server_.endpoint(); }
  int requests() const { return server_.requests(); }
  struct Counts {
    int token_puts = 0, credential_gets = 0, unauthorized = 0;
    int64_t ttl_asked = 0;
    std::set<std::string> tokens_used; // by credential GETs
  };
  Counts counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }

private:
  testing::FakeAnswer Answer(const testing::FakeRequest &r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (r.path == "/latest/api/token") {
      ++counts_.token_puts;
      if (r.method != "PUT" || v1_only_)
        return {405, ""};
      int64_t ttl = 0;
      if (!absl::SimpleAtoi(r.Header("x-aws-ec2-metadata-token-ttl-seconds"),
                            &ttl) ||
          ttl < 1 || ttl > 21600) {
        return {400, ""};
      }
      counts_.ttl_asked = ttl;
      const std::string token = absl::StrCat("token-", counts_.token_puts);
      tokens_[token] = absl::Now() + absl::Seconds(ttl);
      return {200, token};
    }
    const std::string token = r.Header("x-aws-ec2-metadata-token");
    if (!v1_only_) {
      auto it = tokens_.find(token);
      if (r.method != "GET" || it == tokens_.end() ||
          it->second < absl::Now()) {
        ++counts_.unauthorized;
        return {401, ""};
      }
    }
    if (r.path == kCredentialsPath)
      return {200, kRole};
    if (r.path != absl::StrCat(kCredentialsPath, kRole))
      return {404, ""};
    ++counts_.credential_gets;
    counts_.tokens_used.insert(token);
    const std::string expiration = absl::FormatTime(
        "%Y-%m-%dT%H:%M:%SZ", absl::Now() + lifetime_, absl::UTCTimeZone());
    return {
        200,
        absl::StrCat(
            "{\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"",
            testing::kTestAccessKey, "\",\"SecretAccessKey\":\"",
            testing::kTestSecretKey, "\",\"Expiration\":\"", expiration, "\"}"),
        "application/json"};
  }

  const bool v1_only_;
  const absl::Duration lifetime_;
  mutable std::mutex mu_;
  Counts counts_;                            // guarded by mu_
  std::map<std::string, absl::Time> tokens_; // guarded by mu_
  testing::FakeHttpServer server_;           // last: stops before the rest goes
};

class RemoteImdsTest : public testing::SeaweedSuite {
protected:
  // No keys in the environment or ~/.aws, no container endpoint: instance
  // metadata at `endpoint` is the only source.
  void UseInstanceMetadata(const std::string &endpoint) {
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_EC2_METADATA_DISABLED");
    unsetenv("AWS_EC2_METADATA_V1_DISABLED");
    setenv("HOME", testing::MakeTempDir().c_str(), 1);
    setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint.c_str(), 1);
    remote::ForgetStores();
  }
  void TearDown() override {
    unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    unsetenv("AWS_EC2_METADATA_V1_DISABLED");
    remote::ForgetStores();
  }
};

TEST_F(RemoteImdsTest, Imdsv2KeysReadTheBucket) {
  FakeImds imds(/*v1_only=*/false, absl::Hours(6));
  UseInstanceMetadata(imds.endpoint());
  const LoaderOptions o = testing::EveryLoaderPath()[0];
  auto local = testing::ReadBatchBytes({local_dir()}, o);
  ASSERT_TRUE(local.ok()) << local.status();
  auto remote = testing::ReadBatchBytes({"s3://data/ds/"}, o);
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_TRUE(*local == *remote);
  const FakeImds::Counts c = imds.counts();
  EXPECT_EQ(c.token_puts, 1); // keys valid for hours: fetched once
  EXPECT_EQ(c.credential_gets, 1);
  EXPECT_EQ(c.unauthorized, 0);
  EXPECT_EQ(c.ttl_asked, 21600);
  // The fake is strict: a GET without the token is refused.
  remote::HttpRequest bare;
  bare.url = imds.endpoint() + kCredentialsPath;
  bare.retry = false;
  auto refused = remote::HttpClient::Get().Perform(bare);
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
}

TEST_F(RemoteImdsTest, KeysAreRenewedBeforeExpiryWithAFreshToken) {
  // Keys living 2 minutes are inside the 5-minute renewal window: every use
  // renews them, each time with a new session token.
  FakeImds imds(/*v1_only=*/false, absl::Minutes(2));
  UseInstanceMetadata(imds.endpoint());
  remote::CredentialProvider provider(false, false, remote::LoadAwsProfile());
  for (int i = 0; i < 3; ++i) {
    auto c = provider.Get();
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE(c->has_value());
    EXPECT_EQ((*c)->source, "instance metadata");
    EXPECT_EQ((*c)->access_key_id, testing::kTestAccessKey);
    EXPECT_LT((*c)->expiration, absl::Now() + absl::Minutes(3));
  }
  FakeImds::Counts c = imds.counts();
  EXPECT_EQ(c.token_puts, 3);
  EXPECT_EQ(c.credential_gets, 3);
  EXPECT_EQ(c.tokens_used.size(), 3u);
  EXPECT_EQ(c.unauthorized, 0);
  provider.set_refresh_before(
      absl::Seconds(10)); // now the last keys are good: kept
  ASSERT_TRUE(provider.Get().ok());
  EXPECT_EQ(imds.counts().token_puts, 3);
  // Through the stores too: short-lived keys read the bucket.
  auto ds = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(ds.ok()) << ds.status();
}

TEST_F(RemoteImdsTest, DisabledAsksNothing) {
  FakeImds imds(/*v1_only=*/false, absl::Hours(6));
  UseInstanceMetadata(imds.endpoint());
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  auto ds = Dataset::Open({"s3://data/ds/"});
  ASSERT_FALSE(ds.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(ds.status())) << ds.status();
  EXPECT_EQ(imds.requests(), 0);
}

// The AWS SDKs' rule (docs.aws.amazon.com/sdkref/latest/guide/
// feature-imds-credentials.html): IMDSv2 first; a token PUT refused with
// 403, 404 or 405 falls back to IMDSv1, unless it is disabled.
TEST_F(RemoteImdsTest, Imdsv1FallbackAsTheAwsCliUnlessDisabled) {
  FakeImds imds(/*v1_only=*/true, absl::Hours(6));
  UseInstanceMetadata(imds.endpoint());
  auto ds = Dataset::Open({"s3://data/ds/"});
  EXPECT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(imds.counts().token_puts, 1);
  EXPECT_EQ(imds.counts().credential_gets, 1);
  setenv("AWS_EC2_METADATA_V1_DISABLED", "true", 1);
  remote::ForgetStores();
  auto refused = Dataset::Open({"s3://data/ds/"});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("IMDSv1 is disabled"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(imds.counts().credential_gets, 1); // no GET without a token
}

} // namespace
} // namespace shardfeed
