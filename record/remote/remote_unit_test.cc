// Pure parts of the remote client: paths, encoding, redaction, listings,
// config files, credential answers, HTTP status mapping. The requests
// themselves are tested against real servers in tests/remote_*.
#include <cstdlib>

#include "gtest/gtest.h"
#include "record/remote/aws_config.h"
#include "record/remote/credential_provider.h"
#include "record/remote/http_client.h"
#include "record/remote/list_xml.h"
#include "record/remote/object_store.h"
#include "record/remote/url.h"

namespace shardfeed {
namespace remote {
namespace {

TEST(Url, ParsesBucketAndKey) {
  auto p = ParseRemotePath("s3://my-bucket/a/b c.tfrecord");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->scheme, Scheme::kS3);
  EXPECT_EQ(p->bucket, "my-bucket");
  EXPECT_EQ(p->key, "a/b c.tfrecord");
  EXPECT_EQ(ParseRemotePath("gs://b")->key, "");
  EXPECT_EQ(ParseRemotePath("GS://b/k")->scheme, Scheme::kGcs);
  EXPECT_EQ(ParseRemotePath("https://h/x?y")->scheme, Scheme::kHttp);
  EXPECT_FALSE(ParseRemotePath("s3:///key").ok());
  EXPECT_FALSE(ParseRemotePath("s3://bad bucket/k").ok());
  EXPECT_TRUE(IsRemotePath("https://h/x"));
  EXPECT_FALSE(IsRemotePath("/local/s3://x"));
}

TEST(Url, EncodesEachSegmentAndSortsTheQuery) {
  EXPECT_EQ(PercentEncode("a b/c+d~é", true), "a%20b/c%2Bd~%C3%A9");
  EXPECT_EQ(PercentEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(CanonicalQuery({{"prefix", "x/y z"}, {"list-type", "2"}, {"continuation-token", "a=b+"}}),
            "continuation-token=a%3Db%2B&list-type=2&prefix=x%2Fy%20z");
}

TEST(Url, RedactsQueriesAndUserInfo) {
  EXPECT_EQ(RedactUrl("https://h/p?X-Amz-Signature=abc&X-Amz-Credential=AKIA"),
            "https://h/p?<redacted>");
  EXPECT_EQ(RedactUrl("https://user:secret@h/p"), "https://h/p");
  EXPECT_EQ(RemoteDirName("s3://b/a/c.tfrecord"), "s3://b/a");
  EXPECT_EQ(RemoteDirName("s3://b/c"), "s3://b");
}

TEST(ListXml, ReadsObjectsPrefixesAndContinuation) {
  const char* xml =
      "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><Prefix>d/</Prefix>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>"
      "<Contents><Key>d/a&amp;b.tfrecord</Key><ETag>&#34;e1&#34;</ETag><Size>12</Size></Contents>"
      "<Contents><Key>d/c</Key><ETag>&quot;e2&quot;</ETag><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>d/sub/</Prefix></CommonPrefixes></ListBucketResult>";
  auto page = ParseListObjectsV2(xml, "s3://b/d/");
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "d/a&b.tfrecord");
  EXPECT_EQ(page->objects[0].etag, "\"e1\"");
  EXPECT_EQ(page->objects[0].size, 12u);
  EXPECT_EQ(page->prefixes, std::vector<std::string>{"d/sub/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok&1");
  EXPECT_FALSE(ParseListObjectsV2("<Error><Code>x</Code></Error>", "u").ok());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>", "u").ok());
}

TEST(AwsConfig, ParsesIniSections) {
  IniFile ini = ParseIni("# c\n[default]\nregion = eu-west-1\n[profile dev]\n"
                         "Endpoint_URL=http://127.0.0.1:1/\n; x\n");
  EXPECT_EQ(ini["default"]["region"], "eu-west-1");
  EXPECT_EQ(ini["profile dev"]["endpoint_url"], "http://127.0.0.1:1/");
}

TEST(AwsConfig, HalfAKeyPairIsAnErrorThatNamesNoSecret) {
  setenv("AWS_ACCESS_KEY_ID", "", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "topsecret", 1);
  auto c = StaticCredentials(false, AwsProfile());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(c.status().message().find("topsecret"), std::string::npos);
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_ACCESS_KEY_ID");
}

TEST(Credentials, ParsesTheMetadataAnswer) {
  auto c = ParseCredentialsJson(
      R"({"AccessKeyId":"AK","SecretAccessKey":"SK","Token":"T","Expiration":"2030-01-02T03:04:05Z"})",
      "container");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->access_key_id, "AK");
  EXPECT_EQ(c->session_token, "T");
  EXPECT_EQ(c->expiration, absl::FromUnixSeconds(1893553445));
  EXPECT_FALSE(ParseCredentialsJson(R"({"Code":"x"})", "container").ok());
}

TEST(HttpStatus, MapsToStatusCodes) {
  EXPECT_TRUE(absl::IsNotFound(HttpStatusError(404, "http://h/k", "", 1)));
  absl::Status denied =
      HttpStatusError(403, "http://h/k?X-Amz-Signature=s", "<Code>SignatureDoesNotMatch</Code>", 1);
  EXPECT_TRUE(absl::IsPermissionDenied(denied));
  EXPECT_NE(denied.message().find("secret key does not match"), std::string::npos);
  EXPECT_EQ(denied.message().find("X-Amz-Signature"), std::string::npos);
  absl::Status slow = HttpStatusError(503, "http://h/k", "<Code>SlowDown</Code>", 8);
  EXPECT_TRUE(absl::IsUnavailable(slow));
  EXPECT_NE(slow.message().find("HTTP 503 SlowDown after 8 attempts"), std::string::npos);
  EXPECT_TRUE(absl::IsFailedPrecondition(HttpStatusError(412, "http://h/k", "", 1)));
  EXPECT_TRUE(IsRetryableHttpStatus(429));
  EXPECT_FALSE(IsRetryableHttpStatus(403));
}

TEST(ObjectStore, Sha256OfThePayload) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace remote
}  // namespace shardfeed
